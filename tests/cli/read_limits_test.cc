// The limit a file is read under is the one named when it is over it, and each way a file cannot be read
// says which it is (too large, not a regular file, missing, a loop of links).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "apply/harness.h"
#include "support/cli.h"

using gp::test::Gpuprep;

namespace {
// A sparse file of `bytes` (no disk used).
std::string Sparse(const gp::test::TempRoot& dir, const std::string& name, off_t bytes) {
  const std::string path = dir.path() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fclose(f);
  REQUIRE(::truncate(path.c_str(), bytes) == 0);
  return path;
}
}  // namespace

TEST_CASE("read limits: a 2 GB file is over the limit of what it is, not over 64 MiB", "[cli][limits]") {
  gp::test::TempRoot dir;
  const std::string big = Sparse(dir, "big", 2000000000);
  struct Case {
    std::vector<std::string> args;
    const char* limit;
  };
  for (const Case& c : {Case{{"size", "--task", big}, "1 MiB"},
                        Case{{"size", "--model", "llama-2-7b", "--prices", big}, "1 MiB"},
                        Case{{"size", "--config", big}, "1 MiB"},
                        Case{{"size", "--model", "llama-2-7b", "--host", big}, "16 MiB"}}) {
    INFO(c.args[1] + " " + c.args.back());
    auto r = Gpuprep(c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string("larger than the ") + c.limit + " limit") != std::string::npos);
    CHECK(r.err.find("64 MiB") == std::string::npos);
  }
}

TEST_CASE("read limits: fleet-report says why a snapshot cannot be read", "[cli][limits]") {
  gp::test::TempRoot dir;
  const std::string big = Sparse(dir, "big.json", 70000000);
  const std::string fifo = dir.path() + "/fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string loop = dir.path() + "/loop.json";
  std::filesystem::create_symlink(loop, loop);
  auto err = [](const std::string& file) { return Gpuprep({"fleet-report", file}).err; };
  CHECK(err(big) == "gpuprep: error: cannot read " + big + ": larger than the 16 MiB limit\n");
  CHECK(err(fifo) == "gpuprep: error: cannot read " + fifo + ": not a regular file, or permission denied\n");
  CHECK(err(dir.path() + "/none.json") ==
        "gpuprep: error: cannot read " + dir.path() + "/none.json: no such file\n");
  CHECK(err(loop) == "gpuprep: error: cannot read " + loop + ": too many levels of symbolic links\n");
}
