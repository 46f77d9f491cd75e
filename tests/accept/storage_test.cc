// The storage measurement's logic (accept/storage.h) over an in-memory file and a stepped clock: the bytes
// written and read, the stamps checked, the fallback's fsync and fadvise, a stop between requests, the
// checks against the offer's floor, and --storage-size and the offer's `storage=` parsed.
#include "accept/storage.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accept/offer.h"
#include "util/error.h"

using gp::accept::Status;
namespace ac = gp::accept;

namespace {

// A file kept in memory, the real shape of the seam: appends at the end, reads at an offset.
struct MemoryIo : ac::StorageIo {
  bool direct = true;
  std::string data;
  std::vector<std::string> calls;
  uint64_t corrupt_at = UINT64_MAX;  // a byte flipped when read back
  bool fail_sync = false;
  bool Direct() const override { return direct; }
  bool Append(const char* p, size_t n, std::string*) override {
    data.append(p, n);
    calls.push_back("append");
    return true;
  }
  bool Sync(std::string* e) override {
    calls.push_back("sync");
    if (fail_sync) *e = "fdatasync: Input/output error";
    return !fail_sync;
  }
  bool DropCache(std::string*) override {
    calls.push_back("fadvise");
    return true;
  }
  bool ReadAt(char* p, size_t n, uint64_t off, std::string* e) override {
    calls.push_back("read");
    if (off + n > data.size()) {
      *e = "short";
      return false;
    }
    std::memcpy(p, data.data() + off, n);
    if (corrupt_at >= off && corrupt_at < off + n) p[corrupt_at - off] ^= 1;
    return true;
  }
};

// Each call advances the clock by `step`.
ac::StorageClock Stepped(std::chrono::milliseconds step) {
  auto t = std::make_shared<std::chrono::steady_clock::time_point>();
  return [t, step] { return *t += step; };
}

struct Buffer {
  std::vector<char> b = std::vector<char>(ac::kStorageChunk);
};

}  // namespace

TEST_CASE("accept storage: O_DIRECT writes, syncs and reads back every byte", "[accept]") {
  MemoryIo io;
  Buffer buf;
  const uint64_t bytes = 2 * ac::kStorageChunk + 8 * ac::kStorageAlign;  // a short last request
  auto r = ac::MeasureStorage(io, buf.b.data(), bytes, Stepped(std::chrono::milliseconds(500)), nullptr);
  CHECK(r.error.empty());
  CHECK(io.data.size() == bytes);
  CHECK(r.io == "O_DIRECT");
  CHECK(r.write_s == Approx(0.5));
  CHECK(r.read_s == Approx(0.5));
  CHECK(io.calls == std::vector<std::string>{"append", "append", "append", "sync", "read", "read", "read"});
  // Each block is stamped with its own index: no two 4 KiB blocks are alike.
  CHECK(io.data.compare(0, 8, io.data, ac::kStorageAlign, 8) != 0);
}

TEST_CASE("accept storage: without O_DIRECT the pages are dropped before reading back", "[accept]") {
  MemoryIo io;
  io.direct = false;
  Buffer buf;
  auto r = ac::MeasureStorage(io, buf.b.data(), ac::kStorageChunk, Stepped(std::chrono::milliseconds(250)),
                              nullptr);
  CHECK(r.error.empty());
  CHECK(r.io == "fsync + POSIX_FADV_DONTNEED");
  CHECK(io.calls == std::vector<std::string>{"append", "sync", "fadvise", "read"});
}

TEST_CASE("accept storage: a wrong byte read back, a failed sync and a stop", "[accept]") {
  Buffer buf;
  MemoryIo bad;
  bad.corrupt_at = ac::kStorageChunk + 3 * ac::kStorageAlign + 2;
  auto r = ac::MeasureStorage(bad, buf.b.data(), 2 * ac::kStorageChunk, Stepped(std::chrono::milliseconds(1)),
                              nullptr);
  CHECK(r.error == "the data read back differs from what was written, at byte " +
                       std::to_string(ac::kStorageChunk + 3 * ac::kStorageAlign));
  auto checks = ac::StorageChecks(r, std::nullopt);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].status == Status::kFail);

  MemoryIo sync;
  sync.fail_sync = true;
  r = ac::MeasureStorage(sync, buf.b.data(), ac::kStorageChunk, Stepped(std::chrono::milliseconds(1)),
                         nullptr);
  CHECK(r.error == "fdatasync: Input/output error");

  MemoryIo stopped;
  int asked = 0;
  r = ac::MeasureStorage(stopped, buf.b.data(), 4 * ac::kStorageChunk, Stepped(std::chrono::milliseconds(1)),
                         [&] { return ++asked > 2; });
  CHECK(r.interrupted);
  CHECK(stopped.data.size() == 2 * ac::kStorageChunk);
}

TEST_CASE("accept storage: judged only against the offer's floor", "[accept]") {
  ac::StorageResult r;
  r.path = "/data";
  r.bytes = 16'000'000'000ULL;
  r.io = "O_DIRECT";
  r.write_s = 8;  // 2 GB/s
  r.read_s = 4;   // 4 GB/s
  auto none = ac::StorageChecks(r, std::nullopt);
  REQUIRE(none.size() == 3);
  CHECK(none[0].name == "write");
  CHECK(*none[0].measured == Approx(2.0));
  CHECK(none[0].status == Status::kNoExpectation);
  CHECK(none[1].status == Status::kNoExpectation);
  CHECK(*none[1].measured == Approx(4.0));
  CHECK(none[2].name == "checkpoint");
  CHECK(*none[2].measured == Approx(8.0));
  CHECK(none[2].status == Status::kNotApplicable);
  CHECK(none[2].reason == "one checkpoint of 16 GB takes 8 s to write, 4 s to read back");

  ac::StorageFloor f{"/data/", 3e9, "3GB/s"};
  auto judged = ac::StorageChecks(r, f);
  CHECK(judged[0].status == Status::kFail);
  CHECK(judged[0].reason == "wrote 16 GB in 8 s (O_DIRECT), below the offer's 3GB/s");
  CHECK(judged[1].status == Status::kPass);
  CHECK(judged[0].floor->value == Approx(3.0));
  CHECK(ac::SameStoragePath("/data/", "/data"));
  CHECK_FALSE(ac::SameStoragePath("/data2", "/data"));
  CHECK(ac::UnmeasuredFloor(f).status == Status::kSkipped);
}

TEST_CASE("accept storage: --storage-size and the offer's storage floor", "[accept]") {
  CHECK(ac::ParseStorageSize("16GB") == 16'000'000'000ULL);
  CHECK(ac::ParseStorageSize("8MiB") == 8ULL << 20);
  for (const char* bad : {"", "lots", "1KiB", "200TB", "-5GB"})
    CHECK_THROWS_WITH(ac::ParseStorageSize(bad), Catch::Contains("--storage-size"));
  CHECK(ac::AlignedStorageBytes(1'000'000) == 1'003'520);
  CHECK(ac::AlignedStorageBytes(8ULL << 20) == 8ULL << 20);

  std::vector<ac::KnownBoard> boards{{"H100 SXM5 80GB", {}, {"0x2330"}, 81559}};
  auto o = ac::ParseOfferSpec("8x0x2330,storage=/data:2GB/s,storage=/scratch:500MiB/s", boards);
  REQUIRE(o.storage.size() == 2);
  CHECK(o.storage[0].path == "/data");
  CHECK(o.storage[0].bytes_per_s == Approx(2e9));
  CHECK(o.storage[1].bytes_per_s == Approx(500.0 * (1 << 20)));
  CHECK_THROWS_WITH(ac::ParseOfferSpec("8x0x2330,storage=/data", boards), Catch::Contains("PATH:RATE"));
  CHECK_THROWS_WITH(ac::ParseOfferSpec("8x0x2330,storage=/data:2GB", boards), Catch::Contains("not a rate"));
  CHECK_THROWS_WITH(ac::ParseOfferSpec("8x0x2330,storage=:2GB/s", boards), Catch::Contains("PATH:RATE"));
}
