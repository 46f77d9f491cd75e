// The burn: its records read as hostile input, and its verdicts (the CPU check, each GPU against its own
// first product, the GPUs with one SM count against each other, a GPU alone with its SM count, a GPU without
// a result), with the iteration and the digests in the reason.
#include "accept/burn.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "accept/burn_sample.h"
#include "accept/judge.h"
#include "accept/record.h"
#include "accept/run_host.h"
#include "accept/stream.h"
#include "util/error.h"

using gp::accept::Status;

namespace {

const char* kBurnRun =
    R"({"record":"run","schema":1,"started_at":"2026-12-03T10:00:00Z","finished_at":"2026-12-03T10:14:00Z",)"
    R"("host":"gpu-01","driver_version":"560.35.03","stack":"","topology":"pcie","cpus":96,)"
    R"("ram_bytes":1900000000000,"nvme_bytes":[],"source":"test"})";

std::string BurnGpu(int i) {
  return R"({"record":"gpu","gpu":)" + std::to_string(i) +
         R"(,"uuid":"GPU-1","serial":"1","name":"H100","pci_device_id":"0x2330","memory_total_mib":81559,)"
         R"("pcie_max_gen":5,"pcie_max_width":16})";
}

std::string BurnLine(int gpu, const std::string& extra = "", long long digest = 44190843817) {
  return R"({"record":"phase","phase":"burn","gpu":)" + std::to_string(gpu) +
         R"(,"size":8192,"check_values":4096,"check_wrong":0,"duration_s":600.4,"iterations":401216,)"
         R"("digest":)" +
         std::to_string(digest) + R"(,"mismatches":0,"sm_count":132)" + extra + "}";
}

std::string BurnRec(const std::vector<std::string>& burns, int gpus = 2) {
  std::string t = std::string(kBurnRun) + "\n";
  for (int i = 0; i < gpus; ++i) t += BurnGpu(i) + "\n";
  for (const auto& b : burns) t += b + "\n";
  return t + R"({"record":"end"})" + "\n";
}

std::string BurnErrorOf(const std::string& text) {
  try {
    gp::accept::ParseRecording(text, "burn.jsonl");
  } catch (const gp::Error& e) {
    CHECK(e.code() == gp::kExitUsage);
    return e.what();
  }
  return "";
}

std::vector<gp::accept::Check> BurnChecksOf(const std::vector<std::string>& burns, int gpus = 2) {
  return gp::accept::BurnChecks(gp::accept::ParseRecording(BurnRec(burns, gpus), "burn.jsonl"));
}

const gp::accept::Check& FindCheck(const std::vector<gp::accept::Check>& cs, const std::string& name,
                                   int gpu) {
  for (const auto& c : cs)
    if (c.name == name && c.gpu == gpu) return c;
  FAIL("no check " << name << " for GPU " << gpu);
  return cs.front();
}

}  // namespace

TEST_CASE("burn records are read", "[accept][burn]") {
  const auto r = gp::accept::ParseRecording(
      BurnRec({BurnLine(0), BurnLine(1, R"(,"first_mismatch_iteration":812,"first_mismatch_digest":-5)")
                                .replace(BurnLine(1).find("\"mismatches\":0"), 14, "\"mismatches\":1")}),
      "burn.jsonl");
  REQUIRE(r.burns.size() == 2);
  CHECK(r.phases.empty());
  CHECK(r.burns[0].digest == 44190843817);
  CHECK(r.burns[0].sm_count == 132);
  CHECK(r.burns[1].first_mismatch_iteration == 812u);
  CHECK(r.burns[1].first_mismatch_digest == -5);
  CHECK(r.burns[1].line == 5);
}

TEST_CASE("hostile burn records are refused with their line", "[accept][burn]") {
  const std::string at4 = "burn.jsonl:4:";
  CHECK(BurnErrorOf(BurnRec({BurnLine(0), BurnLine(1, ",\"x\":1")})).find("burn.jsonl:5:") ==
        0);  // unknown key
  CHECK(BurnErrorOf(BurnRec({BurnLine(0), BurnLine(0)})).find("a second burn record") !=
        std::string::npos);  // twice
  CHECK(BurnErrorOf(BurnRec({BurnLine(0), BurnLine(2)})).find("no gpu record") != std::string::npos);
  CHECK(BurnErrorOf(BurnRec({BurnLine(0, "", 1LL << 54)})).find("digest") !=
        std::string::npos);  // beyond 2^53
  CHECK(BurnErrorOf(BurnRec({BurnLine(0).replace(BurnLine(0).find("44190843817"), 11, "4.5")}))
            .find("digest") != std::string::npos);
  // a first mismatch without mismatches, at iteration 0, or equal to the first product
  CHECK(BurnErrorOf(BurnRec({BurnLine(0, R"(,"first_mismatch_iteration":3,"first_mismatch_digest":1)")}))
            .find(at4) == 0);
  const std::string one = BurnLine(0).replace(BurnLine(0).find("\"mismatches\":0"), 14, "\"mismatches\":1");
  CHECK(BurnErrorOf(BurnRec({one.substr(0, one.size() - 1) +
                             R"(,"first_mismatch_iteration":0,"first_mismatch_digest":1})"}))
            .find("from 1") != std::string::npos);
  CHECK(BurnErrorOf(BurnRec({one.substr(0, one.size() - 1) +
                             R"(,"first_mismatch_iteration":9,"first_mismatch_digest":44190843817})"}))
            .find("not a mismatch") != std::string::npos);
  CHECK(BurnErrorOf(BurnRec({one})).find("exactly when") != std::string::npos);
  CHECK(BurnErrorOf(
            BurnRec({BurnLine(0).replace(BurnLine(0).find("\"check_wrong\":0"), 15, "\"check_wrong\":5000")}))
            .find("above") != std::string::npos);
  CHECK(BurnErrorOf(
            BurnRec({BurnLine(0).replace(BurnLine(0).find("\"iterations\":401216"), 19, "\"iterations\":0")}))
            .find("at least one product") != std::string::npos);
}

TEST_CASE("burn verdicts", "[accept][burn]") {
  SECTION("healthy: every GPU passes, compared with its peers") {
    const auto cs = BurnChecksOf({BurnLine(0), BurnLine(1)});
    REQUIRE(cs.size() == 4);
    for (const auto& c : cs) CHECK(c.status == Status::kPass);
    CHECK(FindCheck(cs, "digest", 0).expected == "equal to GPU 1 (the same 132 SMs)");
  }
  SECTION("a GPU whose product changes at iteration 812 fails with the iteration and both digests") {
    std::string bad = BurnLine(1, R"(,"first_mismatch_iteration":812,"first_mismatch_digest":44190860201)");
    bad.replace(bad.find("\"mismatches\":0"), 14, "\"mismatches\":1");
    const auto cs = BurnChecksOf({BurnLine(0), bad});
    CHECK(FindCheck(cs, "digest", 0).status == Status::kPass);
    const auto& c = FindCheck(cs, "digest", 1);
    CHECK(c.status == Status::kFail);
    CHECK(c.reason.find("at iteration 812 its product's digest was 44190860201, its first product's "
                        "44190843817 (1 of 401216 products differ)") != std::string::npos);
  }
  SECTION("the GPU most others disagree with fails; a tie fails every GPU of the group") {
    const auto cs = BurnChecksOf({BurnLine(0), BurnLine(1), BurnLine(2, "", 7)}, 3);
    CHECK(FindCheck(cs, "digest", 0).status == Status::kPass);
    const auto& c = FindCheck(cs, "digest", 2);
    CHECK(c.status == Status::kFail);
    CHECK(c.reason.find("at iteration 0 its product's digest was 7, that of GPU 0, 1 (the same 132 SMs) "
                        "44190843817") != std::string::npos);
    const auto tie = BurnChecksOf({BurnLine(0), BurnLine(1, "", 7)});
    CHECK(FindCheck(tie, "digest", 0).status == Status::kFail);
    CHECK(FindCheck(tie, "digest", 1).reason.find("no digest is held by most: GPU 0 44190843817, GPU 1 7") !=
          std::string::npos);
  }
  SECTION("a GPU with another SM count is compared with its own first product only") {
    std::string other = BurnLine(1, "", 99);
    other.replace(other.find("\"sm_count\":132"), 14, "\"sm_count\":114");
    const auto cs = BurnChecksOf({BurnLine(0), other});
    CHECK(FindCheck(cs, "digest", 0).status == Status::kPass);
    CHECK(FindCheck(cs, "digest", 1).status == Status::kPass);
    CHECK(FindCheck(cs, "digest", 1).expected == "equal to its first product (no other GPU has 114 SMs)");
  }
  SECTION("the CPU check failing, and a GPU without a burn result, fail") {
    std::string bad = BurnLine(0);
    bad.replace(bad.find("\"check_wrong\":0"), 15, "\"check_wrong\":3");
    const auto cs = BurnChecksOf({bad});
    CHECK(FindCheck(cs, "cpu check", 0).status == Status::kFail);
    CHECK(FindCheck(cs, "cpu check", 0).reason.find("3 of 4096 values") != std::string::npos);
    CHECK(FindCheck(cs, "digest", 1).status == Status::kFail);
    CHECK(FindCheck(cs, "digest", 1).reason == "no burn result from this GPU");
  }
  SECTION("no burn: no checks") { CHECK(BurnChecksOf({}).empty()); }
}

TEST_CASE("burn: the program is asked for it, under cuBLAS's reproducibility setting", "[accept][burn]") {
  using std::chrono::seconds;
  const auto argv = gp::accept::ProgramArgv("python3", 8, false, {1ull << 30}, seconds(600));
  REQUIRE(argv.size() >= 2);
  CHECK(argv[argv.size() - 2] == "--burn-seconds");
  CHECK(argv.back() == "600");
  const auto none = gp::accept::ProgramArgv("python3", 8, true, {1ull << 30});
  CHECK(std::find(none.begin(), none.end(), "--burn-seconds") == none.end());
  CHECK(gp::accept::ProgramEnv(true).at("CUBLAS_WORKSPACE_CONFIG") == ":4096:8");
  CHECK(gp::accept::ProgramEnv(false).count("CUBLAS_WORKSPACE_CONFIG") == 0);
  CHECK(gp::accept::PhaseBudget("burn", false, seconds(600)) == seconds(600) + gp::accept::kBurnSetup);
  CHECK(gp::accept::RunBudget(false, seconds(600)) ==
        gp::accept::RunBudget(false) + seconds(600) + gp::accept::kBurnSetup + gp::accept::kBetweenPhases);
}

TEST_CASE("burn: the stream gives the burn phase its duration's allowance", "[accept][burn]") {
  auto t = std::chrono::steady_clock::time_point{};
  gp::accept::ProgramStream s(1, false, [&t] { return t; });
  s.SetBurn(std::chrono::seconds(30));
  REQUIRE(s.on_stdout("{\"record\":\"progress\",\"phase\":\"burn\",\"state\":\"start\",\"budget_s\":30}\n"));
  CHECK(*s.deadline() == t + std::chrono::seconds(30) + gp::accept::kBurnSetup);
  t += std::chrono::seconds(30) + gp::accept::kBurnSetup;
  s.Finish(-1);
  REQUIRE(s.Findings().size() == 1);
  CHECK(s.Findings()[0].what.find("phase burn did not finish within its 150 s (no result from GPU 0)") !=
        std::string::npos);
}

namespace {

std::string ClocksLine(int gpu, const std::string& reasons, const std::string& xids = "[]") {
  return R"({"record":"burn_clocks","gpu":)" + std::to_string(gpu) +
         R"(,"samples":600,"sm_clock_median_mhz":1755,"sm_clock_min_mhz":1695,"power_median_w":698.2,)"
         R"("power_max_w":700.4,"reasons":)" +
         reasons + R"(,"xids":)" + xids + "}";
}

gp::watch::GpuSample GpuSampleOf(unsigned mhz, double watts, uint64_t reasons,
                                 gp::watch::GpuState state = gp::watch::GpuState::kOk) {
  gp::watch::GpuSample s;
  s.state = state;
  s.sm_clock_mhz = mhz;
  s.power_w = watts;
  s.clock_event_reasons = reasons;
  return s;
}

}  // namespace

TEST_CASE("burn clocks: reasons other than idle, the power cap and application clocks fail",
          "[accept][burn]") {
  const auto calm = BurnChecksOf({ClocksLine(0, R"({"sw_power_cap":0.91,"gpu_idle":0.02})")}, 1);
  REQUIRE(calm.size() == 1);
  CHECK(calm[0].status == Status::kPass);
  CHECK(calm[0].found ==
        "600 readings; SM clock median 1755 MHz, min 1695 MHz; power median 698.2 W, max 700.4 W; reasons: "
        "gpu_idle 2%, sw_power_cap 91%");
  const auto brake =
      BurnChecksOf({ClocksLine(0, R"({"sw_power_cap":0.55,"hw_power_brake":0.4,"sw_thermal":0.004})")}, 1);
  CHECK(brake[0].status == Status::kFail);
  CHECK(brake[0].reason == "sw_thermal held 0.4% of the burn, hw_power_brake held 40% of the burn");
  const auto xid = BurnChecksOf({ClocksLine(0, "{}", R"([{"code":79,"at_s":312.5}])")}, 1);
  REQUIRE(xid.size() == 2);
  CHECK(xid[0].status == Status::kPass);
  CHECK(xid[1].name == "xid");
  CHECK(xid[1].status == Status::kFail);
  CHECK(
      xid[1].reason ==
      "the driver logged Xid 79 for this GPU 312.5 s into the burn (the kernel log); gpuprep doctor --health "
      "names its fix");
}

TEST_CASE("burn clocks records are read as hostile input", "[accept][burn]") {
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, R"({"hw_power_brake":1.5})")})).find("a share from 0 to 1") !=
        std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, R"({"warp_drive":0.1})")})).find("unknown clock-event reason") !=
        std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, "{}", R"([{"code":79}])")})).find("each Xid") !=
        std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, "{}", R"([{"code":-1,"at_s":1}])")})).find("each Xid") !=
        std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, "{}"), ClocksLine(0, "{}")})).find("a second burn_clocks") !=
        std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(3, "{}")})).find("no gpu record") != std::string::npos);
  std::string hot = ClocksLine(0, "{}");
  hot.replace(hot.find("\"sm_clock_min_mhz\":1695"), 23, "\"sm_clock_min_mhz\":1800");
  CHECK(BurnErrorOf(BurnRec({hot})).find("above") != std::string::npos);
  CHECK(BurnErrorOf(BurnRec({ClocksLine(0, "{}").insert(1, R"("x":1,)")})).find("unknown key") !=
        std::string::npos);
}

TEST_CASE("burn clocks summarised from watch's samples, and read back", "[accept][burn]") {
  using gp::watch::GpuState;
  std::vector<gp::watch::GpuSample> s{GpuSampleOf(1980, 690, 0x4),
                                      GpuSampleOf(1755, 700, 0x4 | 0x80),
                                      GpuSampleOf(345, 420, 0x80 | 0x8),
                                      GpuSampleOf(1980, 300, 0x0),
                                      GpuSampleOf(100, 10, 0x80, GpuState::kGap),
                                      GpuSampleOf(1755, 698, 0x4)};
  s[0].temperature_c = 71;
  s[1].temperature_c = 83;
  s[2].temperature_c = 76;
  s[4].temperature_c = 99;  // in the gap: counted out
  const auto c = gp::accept::SummariseBurnClocks(1, s, {{79, 312.5}});
  CHECK(c.samples == 5);  // the gap is counted out
  CHECK(c.sm_clock_median_mhz == 1755);
  CHECK(c.sm_clock_min_mhz == 345);
  CHECK(*c.power_median_w == Approx(690));
  CHECK(*c.power_max_w == Approx(700));
  CHECK(*c.temperature_median_c == Approx(76));  // three readings of five have one
  CHECK(*c.temperature_max_c == Approx(83));
  REQUIRE(c.reasons.size() == 3);
  CHECK(c.reasons[0] == std::make_pair(std::string("sw_power_cap"), 0.6));
  CHECK(c.reasons[1] == std::make_pair(std::string("hw_slowdown"), 0.2));
  CHECK(c.reasons[2] == std::make_pair(std::string("hw_power_brake"), 0.4));
  const auto r = gp::accept::ParseRecording(BurnRec({gp::accept::BurnClocksLine(c)}), "burn.jsonl");
  REQUIRE(r.burn_clocks.size() == 1);
  CHECK(r.burn_clocks[0].reasons == c.reasons);
  REQUIRE(r.burn_clocks[0].xids.size() == 1);
  CHECK(r.burn_clocks[0].xids[0].code == 79);
  CHECK(*r.burn_clocks[0].temperature_median_c == Approx(76));
  CHECK(*r.burn_clocks[0].temperature_max_c == Approx(83));
  const auto checks = gp::accept::BurnChecks(r);
  CHECK(checks[0].found.find("; temperature median 76 C, max 83 C") != std::string::npos);
  CHECK(checks[0].reason == "hw_slowdown held 20% of the burn, hw_power_brake held 40% of the burn");
}
