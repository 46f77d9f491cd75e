// The acceptance recording reader: the documented records are read, and hostile input is refused with
// its line (truncated lines, oversized lines, NaN, infinities, negatives, unknown records and keys).
#include "accept/record.h"

#include <catch2/catch.hpp>
#include <string>

#include "util/error.h"

namespace {

const char* kRun =
    R"({"record":"run","schema":1,"started_at":"2026-12-03T10:00:00Z","finished_at":"2026-12-03T10:04:00Z",)"
    R"("host":"gpu-01","driver_version":"560.35.03","stack":"","topology":"nvswitch","cpus":96,)"
    R"("ram_bytes":1900000000000,"nvme_bytes":[3840755982336],"source":"test"})";
const char* kGpu =
    R"({"record":"gpu","gpu":0,"uuid":"GPU-1","serial":"1650","name":"NVIDIA H100 80GB HBM3",)"
    R"("pci_device_id":"0x2330","memory_total_mib":81559,"pcie_max_gen":5,"pcie_max_width":16,)"
    R"("upstream_max_gen":5,"upstream_max_width":16,"nvlink_links_up":18,"fabric_complete":true,)"
    R"("nvlink_p2p_peers":[]})";
const char* kEnd = R"({"record":"end"})";

std::string With(const std::string& middle) {
  return std::string(kRun) + "\n" + kGpu + "\n" + middle + (middle.empty() ? "" : "\n") + kEnd + "\n";
}

std::string ErrorOf(const std::string& text) {
  try {
    gp::accept::ParseRecording(text, "rec.jsonl");
  } catch (const gp::Error& e) {
    CHECK(e.code() == gp::kExitUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("accept: a recording's records are read", "[accept]") {
  auto r = gp::accept::ParseRecording(
      With(R"({"record":"phase","phase":"matmul_bf16","gpu":0,"tflops":790.5,"m":8192,"n":8192,"k":8192,)"
           R"("duration_s":60,"pcie_gen_current":5,"pcie_width_current":16})"),
      "rec.jsonl");
  CHECK(r.run.driver_version == "560.35.03");
  CHECK(r.run.nvme_bytes.size() == 1);
  REQUIRE(r.gpus.size() == 1);
  CHECK(r.gpus[0].pci_device_id == "0x2330");
  CHECK(r.gpus[0].nvlink_links_up == 18);
  REQUIRE(r.phases.size() == 1);
  CHECK(r.phases[0].value == Approx(790.5));
  CHECK(r.phases[0].unit == "tflops");
  CHECK(r.phases[0].line == 3);
  CHECK(r.phases[0].pcie_gen_current == 5);
}

TEST_CASE("accept: hostile recordings are refused with their line", "[accept]") {
  const std::string phase = R"({"record":"phase","phase":"hbm_copy","gpu":0,"tb_per_s":)";
  CHECK(ErrorOf(With(phase + "-2.9,\"bytes\":1,\"duration_s\":1}")).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(With(phase + "-2.9,\"bytes\":1,\"duration_s\":1}")).find("negative") != std::string::npos);
  CHECK(ErrorOf(With(phase + "NaN,\"bytes\":1,\"duration_s\":1}")).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(With(phase + "1e999,\"bytes\":1,\"duration_s\":1}")).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(With(phase + "\"2.9\",\"bytes\":1,\"duration_s\":1}")).find("must be a number") !=
        std::string::npos);
  CHECK(ErrorOf(With(phase + "2.9,\"bytes\":1}")).find("duration_s") != std::string::npos);
  CHECK(ErrorOf(With(phase + "2.9,\"bytes\":1,\"duration_s\":1,\"extra\":1}")).find("unknown key") !=
        std::string::npos);
  CHECK(ErrorOf(With(R"({"record":"bogus"})")).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(With(R"({"record":"phase","phase":"fft","gpu":0})")).find("unknown phase") !=
        std::string::npos);
  CHECK(ErrorOf(With(R"(["not an object"])")).find("rec.jsonl:3:") == 0);
  // A truncated line, and a recording cut before its end record.
  CHECK(ErrorOf(With(phase + "2.9,\"bytes\":1,\"dur")).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(std::string(kRun) + "\n" + kGpu + "\n").find("end record") != std::string::npos);
  // A 10 MB line is refused without being parsed; so is a recording past the total bound.
  CHECK(ErrorOf(With(std::string(10u << 20, 'x'))).find("rec.jsonl:3:") == 0);
  CHECK(ErrorOf(With(std::string(10u << 20, 'x'))).find("65536") != std::string::npos);
  std::string big;
  while (big.size() <= gp::accept::kMaxTotal) big += std::string(1000, ' ') + "\n";
  CHECK(ErrorOf(big).find("larger than") != std::string::npos);
  // The run record comes first, once.
  CHECK(ErrorOf(std::string(kGpu) + "\n" + kEnd + "\n").find("rec.jsonl:1:") == 0);
  CHECK(ErrorOf(With(kRun)).find("rec.jsonl:3:") == 0);
  // A GPU index that no gpu record names.
  CHECK(ErrorOf(With(R"({"record":"phase","phase":"h2d","gpu":4,"gb_per_s":50,"bytes":1,"duration_s":1})"))
            .find("no gpu record") != std::string::npos);
  // Text that is not valid UTF-8 or holds control characters.
  CHECK(ErrorOf(With(std::string(R"({"record":"phase","phase":"h2d)") + "\x1b" +
                     R"(","gpu":0,"gb_per_s":1,"bytes":1,"duration_s":1})"))
            .find("rec.jsonl:3:") == 0);
}
