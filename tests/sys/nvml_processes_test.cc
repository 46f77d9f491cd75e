// The process list decoded with the stride the driver actually wrote: 24 bytes as declared, R535's
// 32-byte entries, and the 16-byte ones one later driver wrote.
#include "sys/nvml_processes.h"

#include <catch2/catch.hpp>
#include <cstring>

using namespace gp::sys;

namespace {
// Writes `pids` as a driver would with entries of `stride` bytes, into a zeroed buffer of room for 8
// entries of 32 bytes.
std::vector<uint8_t> Write(const std::vector<unsigned>& pids, size_t stride) {
  std::vector<uint8_t> buf(8 * 32, 0);
  for (size_t i = 0; i < pids.size(); ++i) {
    uint8_t* e = buf.data() + i * stride;
    const unsigned long long mem = (1000ull + i) << 20;
    const unsigned none = 0xFFFFFFFFu;
    std::memcpy(e, &pids[i], 4);
    std::memcpy(e + 8, &mem, 8);
    if (stride >= 24) {
      std::memcpy(e + 16, &none, 4);
      std::memcpy(e + 20, &none, 4);
    }
  }
  return buf;
}
const uint64_t kTotal = 80ull << 30;
}  // namespace

TEST_CASE("DecodeProcesses: each stride is recognised", "[sys][nvml]") {
  const std::vector<unsigned> pids = {4100, 4200, 4300};
  auto visible = [](unsigned pid) { return pid == 4100 || pid == 4200 || pid == 4300; };
  for (size_t stride : {24, 32, 16}) {
    DecodedProcesses d = DecodeProcesses(Write(pids, stride), 3, kTotal, visible);
    INFO("stride " << stride);
    CHECK(d.stride == stride);
    REQUIRE(d.processes.size() == 3);
    CHECK(d.processes[1].pid == 4200);
    CHECK(d.processes[1].used_bytes == (1001ull << 20));
    CHECK_FALSE(d.processes[1].gpu_instance_id);
  }
}

TEST_CASE("DecodeProcesses: without /proc (another pid namespace) the layout alone decides", "[sys][nvml]") {
  DecodedProcesses d = DecodeProcesses(Write({4100, 4200}, 32), 2, kTotal, nullptr);
  CHECK(d.stride == 32);
  CHECK(d.processes[1].pid == 4200);
  // One entry reads the same under every stride: the declared one.
  CHECK(DecodeProcesses(Write({4100}, 32), 1, kTotal, nullptr).stride == 24);
  CHECK(DecodeProcesses(Write({}, 24), 0, kTotal, nullptr).processes.empty());
}

TEST_CASE("DecodeProcesses: NOT_AVAILABLE memory and MIG instance ids", "[sys][nvml]") {
  std::vector<uint8_t> buf(2 * 32, 0);
  const unsigned pid = 900, gi = 2, ci = 0;
  const unsigned long long na = ~0ull;
  std::memcpy(buf.data(), &pid, 4);
  std::memcpy(buf.data() + 8, &na, 8);
  std::memcpy(buf.data() + 16, &gi, 4);
  std::memcpy(buf.data() + 20, &ci, 4);
  DecodedProcesses d = DecodeProcesses(buf, 1, kTotal, nullptr);
  REQUIRE(d.processes.size() == 1);
  CHECK_FALSE(d.processes[0].used_bytes);
  CHECK(d.processes[0].gpu_instance_id == 2u);
}
