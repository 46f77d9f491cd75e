// The byte ring between the download and the extraction (redist/pipe.h): every byte arrives once and in
// order across wrap-arounds, a small ring back-pressures the writer, and a failure on either side stops the
// other.
#include "redist/pipe.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <thread>

using namespace gp::redist;

namespace {

std::string Bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace

TEST_CASE("byte pipe: a stream pushed in odd pieces comes out whole through a small ring", "[redist][pipe]") {
  const std::string data = Bytes(1 << 20, 7);
  BytePipe pipe(1000, 300);  // far smaller than the stream: the writer waits and the ring wraps many times
  bool pushed = true;        // Catch2's assertions belong to the test's thread
  std::thread writer([&] {
    std::mt19937 rng(3);
    size_t at = 0;
    while (at < data.size() && pushed) {
      size_t n = std::min<size_t>(1 + rng() % 2500, data.size() - at);
      pushed = pipe.Push(data.data() + at, n);
      at += n;
    }
    pipe.Close(!pushed);
  });
  std::string got;
  size_t most = 0;
  for (;;) {
    const void* p = nullptr;
    long n = pipe.Read(&p);
    REQUIRE(n >= 0);
    if (n == 0) break;
    most = std::max(most, static_cast<size_t>(n));
    got.append(static_cast<const char*>(p), static_cast<size_t>(n));
  }
  writer.join();
  CHECK(pushed);
  CHECK(got.size() == data.size());
  CHECK(got == data);
  CHECK(most <= 300);
  pipe.Finish(false);
}

TEST_CASE("byte pipe: failures stop the other side", "[redist][pipe]") {
  SECTION("a failed reader makes Push return false, even while the writer waits for space") {
    BytePipe pipe(16, 16);
    std::thread reader([&] { pipe.Finish(true); });
    const std::string big(64, 'x');
    CHECK_FALSE(pipe.Push(big.data(), big.size()));
    reader.join();
  }
  SECTION("a reader that finished normally lets the writer run on (the hash needs every byte)") {
    BytePipe pipe(16, 16);
    pipe.Finish(false);
    const std::string big(64, 'x');
    CHECK(pipe.Push(big.data(), big.size()));
  }
  SECTION("a failed writer makes Read return -1 after the bytes already queued") {
    BytePipe pipe(16, 16);
    CHECK(pipe.Push("abc", 3));
    pipe.Close(true);
    const void* p = nullptr;
    CHECK(pipe.Read(&p) == 3);
    CHECK(std::string(static_cast<const char*>(p), 3) == "abc");
    CHECK(pipe.Read(&p) == -1);
  }
  SECTION("a clean end reads as 0") {
    BytePipe pipe;
    pipe.Close(false);
    const void* p = nullptr;
    CHECK(pipe.Read(&p) == 0);
  }
}
