// doctor --health: the health classes, node-problem-detector's exit codes and 80-byte line, Slurm's drain
// (a recording runner stands in for slurmd and scontrol), on the health fixture trees read as a live host
// whose NVML answers per bus id, and under --root.
#include "doctor/health.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "doctor/health_kit.h"
#include "util/health_codes.h"
#include "watch/verdict.h"

using namespace gp;

namespace {

using test::EveryFault;
using test::HealthFixture;
using test::HealthNvml;
using test::HealthRun;
using test::RunOn;

const std::vector<std::string> kNvmlClasses = {"doctor", "--health", "--class",
                                               "bus,memory,clocks,nvlink,recovery"};

std::vector<std::string> With(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

TEST_CASE("health classes: every health code has one, other codes none", "[doctor][health]") {
  using doctor::HealthClass;
  CHECK(HealthClass("gpu.lost") == "bus");
  CHECK(HealthClass("gpu.off-bus") == "bus");
  CHECK(HealthClass("gpu.pcie-width") == "bus");
  CHECK(HealthClass("gpu.row-remap-failure") == "memory");
  CHECK(HealthClass("gpu.ecc-uncorrected") == "memory");
  CHECK(HealthClass("gpu.retired-pages-pending") == "memory");
  CHECK(HealthClass("gpu.clocks-power-brake") == "clocks");
  CHECK(HealthClass("gpu.power-limit-low") == "clocks");
  CHECK(HealthClass("gpu.nvlink-down") == "nvlink");
  CHECK(HealthClass("gpu.xid-hardware") == "xid");
  CHECK(HealthClass("driver.recovery-action") == "recovery");
  CHECK(HealthClass("driver.recovery-action-unknown") == "recovery");
  CHECK(HealthClass("gpu.found").empty());
  CHECK(HealthClass("gpu.pcie-speed-not-judged").empty());
  CHECK(HealthClass("driver.recovery-none").empty());
  CHECK(HealthClass("driver.module-mismatch").empty());
}

TEST_CASE("NPD: every fault at once is a problem in one line of at most 80 bytes, well within 5 s",
          "[doctor][health]") {
  HealthNvml nvml = EveryFault();
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--npd"}, &nvml, nullptr);
  CHECK(r.code == 1);
  INFO(r.out);
  CHECK(r.out.size() <= 81);
  CHECK(r.out.back() == '\n');
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK(r.out.rfind("gpu.lost: GPU 0 (0000:18:00.0)", 0) == 0);
  CHECK(r.out.find(" more)") != std::string::npos);
  CHECK(r.seconds < 5.0);
  CHECK(r.err.empty());

  // The table names each fault.
  HealthRun t = RunOn("gen5-in-gen4", {"doctor", "--health"}, &nvml, nullptr);
  CHECK(t.code == 1);
  for (const char* what : {"lost", "remap", "uncorrected", "power brake", "NVLink links 3", "reboot"}) {
    INFO(what);
    CHECK(t.out.find(what) != std::string::npos);
  }

  // One class at a time: each fault in its own class. The power brake is a warning: the node is not
  // taken out of service for it, and the line says it.
  for (const std::string& cls : std::vector<std::string>{"bus", "memory", "nvlink", "recovery"}) {
    HealthRun c = RunOn("gen5-in-gen4", {"doctor", "--health", "--npd", "--class", cls}, &nvml, nullptr);
    INFO(cls << ": " << c.out);
    CHECK(c.code == 1);
  }
  HealthRun clocks =
      RunOn("gen5-in-gen4", {"doctor", "--health", "--npd", "--class", "clocks"}, &nvml, nullptr);
  CHECK(clocks.code == 0);
  CHECK(clocks.out == "ok: 4 GPUs healthy, 1 warning (gpu.clocks-power-brake)\n");
}

TEST_CASE("NPD: a healthy host is ok; NVML that answers nothing is unknown", "[doctor][health]") {
  HealthNvml healthy;
  HealthRun ok = RunOn("gen5-in-gen4", With(kNvmlClasses, {"--npd"}), &healthy, nullptr);
  CHECK(ok.code == 0);
  CHECK(ok.out == "ok: 4 GPUs healthy\n");

  HealthNvml absent;
  absent.loaded = false;
  HealthRun unknown = RunOn("gen5-in-gen4", With(kNvmlClasses, {"--npd"}), &absent, nullptr);
  CHECK(unknown.code == 2);
  CHECK(unknown.out.rfind("unknown: NVML answered for no GPU", 0) == 0);
  CHECK(unknown.out.size() <= 81);

  // A fault read from the tree itself is a problem even without NVML.
  HealthRun off = RunOn("off-bus", With(kNvmlClasses, {"--npd"}), &absent, nullptr);
  CHECK(off.code == 1);
  CHECK(off.out.rfind("gpu.off-bus: ", 0) == 0);
}

TEST_CASE("NPD under --root: the tree's files judged, the Xid history from its logs", "[doctor][health]") {
  HealthRun r =
      RunOn("", {"--root", HealthFixture("unbound"), "doctor", "--health", "--npd"}, nullptr, nullptr);
  CHECK(r.code == 1);
  CHECK(r.out.rfind("gpu.", 0) == 0);
  // No kernel log in the tree: the Xid class cannot be judged.
  HealthRun x =
      RunOn("", {"--root", HealthFixture("pcie-x8"), "doctor", "--health", "--npd", "--class", "xid"},
            nullptr, nullptr);
  CHECK(x.code == 2);
  CHECK(x.out == "unknown: the kernel log could not be read for Xid events\n");
}

TEST_CASE("Slurm: a failure drains this node through scontrol's argv; a healthy host runs nothing",
          "[doctor][health]") {
  HealthNvml nvml = EveryFault();
  test::FakeCommandRunner runner;
  runner.strict = true;
  runner.On("slurmd -C", test::Exit(0,
                                    "NodeName=gpu-07 CPUs=224 Boards=1 SocketsPerBoard=2 RealMemory=2063937\n"
                                    "UpTime=12-03:04:05\n"));
  runner.On("scontrol update", test::Exit(0));
  runner.On("journalctl", test::Exit(0));
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--slurm"}, &nvml, &runner);
  CHECK(r.code == 0);
  REQUIRE(runner.calls.size() == 3);
  CHECK(runner.calls[0].argv[0] == "journalctl");
  CHECK(runner.calls[1].argv[0] == "slurmd");
  const std::vector<std::string>& argv = runner.calls[2].argv;
  REQUIRE(argv.size() == 5);
  CHECK(argv[0] == "scontrol");
  CHECK(argv[1] == "update");
  CHECK(argv[2] == "NodeName=gpu-07");
  CHECK(argv[3] == "State=DRAIN");
  CHECK(argv[4].rfind("Reason=gpuprep: gpu.lost GPU 0 (0000:18:00.0)", 0) == 0);
  CHECK(argv[4].size() <= 7 + 160);
  CHECK(r.out.rfind("drained gpu-07: gpuprep: gpu.lost", 0) == 0);

  HealthNvml healthy;
  test::FakeCommandRunner quiet;
  quiet.strict = true;
  quiet.On("journalctl", test::Exit(0));
  HealthRun h = RunOn("gen5-in-gen4", With(kNvmlClasses, {"--slurm", "--node", "gpu-07"}), &healthy, &quiet);
  CHECK(h.code == 0);
  REQUIRE(quiet.calls.size() == 1);
  CHECK(quiet.calls[0].argv[0] == "journalctl");
  CHECK(h.out == "gpu-07: ok: 4 GPUs healthy\n");

  // scontrol failing is said, and the exit is 1 (slurmd runs the program again).
  test::FakeCommandRunner refused;
  refused.On("scontrol", test::Exit(1, "", "slurm_update error: Invalid node name specified\n"));
  HealthRun f = RunOn("gen5-in-gen4", {"doctor", "--health", "--slurm", "--node", "gpu-07"}, &nvml, &refused);
  CHECK(f.code == 1);
  CHECK(f.err.find("Invalid node name specified") != std::string::npos);
}

TEST_CASE("Slurm: hostile node names are refused, from the flag and from slurmd", "[doctor][health]") {
  HealthNvml nvml = EveryFault();
  for (const std::string& bad :
       std::vector<std::string>{"gpu 07", "gpu07;reboot", "-gpu07", "gpu07\nState=RESUME", "a=b",
                                std::string(65, 'a'), "gpu[01-04]", ""}) {
    test::FakeCommandRunner runner;
    runner.strict = true;
    runner.On("journalctl", test::Exit(0));
    HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--slurm", "--node=" + bad}, &nvml, &runner);
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--node") != std::string::npos);
    for (const auto& c : runner.calls) CHECK(c.argv[0] != "scontrol");
  }
  test::FakeCommandRunner hostile;
  hostile.strict = true;
  hostile.On("slurmd -C", test::Exit(0, "NodeName=gpu07;rm CPUs=8\n"));
  hostile.On("journalctl", test::Exit(0));
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--slurm"}, &nvml, &hostile);
  CHECK(r.code == 1);
  CHECK(r.err.find("invalid NodeName") != std::string::npos);
  CHECK(hostile.calls.size() == 2);
}

TEST_CASE("doctor --health: flags that do not go together are refused (exit 2)", "[doctor][health]") {
  HealthNvml nvml;
  auto refused = [&](std::vector<std::string> args, const std::string& flag) {
    HealthRun r = RunOn("gen5-in-gen4", std::move(args), &nvml, nullptr);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
  };
  refused({"doctor", "--npd"}, "--npd");
  refused({"doctor", "--health", "--npd", "--slurm"}, "--npd");
  refused({"--json", "doctor", "--health", "--npd"}, "--json");
  refused({"doctor", "--health", "--class", "disk"}, "--class");
  refused({"doctor", "--health", "--npd", "--node", "gpu07"}, "--node");
  refused({"--root", HealthFixture("unbound"), "doctor", "--health", "--slurm", "--node", "gpu07"},
          "--slurm");
  refused({"doctor", "--health", "--registry"}, "--registry");
}

TEST_CASE("NPD line: cut to the byte limit, printable ASCII only", "[doctor][health]") {
  doctor::HealthVerdict v;
  v.kind = doctor::HealthVerdict::Kind::kProblem;
  verdict::Finding f;
  f.code = "gpu.xid-hardware";
  f.status = verdict::Status::kFail;
  f.message = "GPU 3 logged Xid 79 from process \xe2\x98\x83\x1b[31m " + std::string(200, 'x');
  v.failures = {f, f, f};
  const std::string line = doctor::NpdLine(v);
  CHECK(line.size() == 80);
  CHECK(line.rfind("gpu.xid-hardware: GPU 3", 0) == 0);
  CHECK(line.substr(line.size() - 10) == " (+2 more)");
  for (unsigned char c : line) CHECK((c >= 0x20 && c <= 0x7e));
  CHECK(doctor::NpdLine(v, 20).size() <= 20);
  CHECK(doctor::SlurmReason(v).size() <= 160);
}

namespace {

// A Go duration as NPD's config parses it (time.ParseDuration), for the forms a config uses: "500ms",
// "5s", "1m", "1h30m"; nullopt otherwise.
std::optional<double> GoSeconds(const std::string& s) {
  double total = 0;
  size_t i = 0;
  if (s.empty()) return std::nullopt;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    if (j == i) return std::nullopt;
    const double n = std::stod(s.substr(i, j - i));
    size_t k = j;
    while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
    const std::string unit = s.substr(j, k - j);
    static const std::map<std::string, double> kUnits = {{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}};
    auto u = kUnits.find(unit);
    if (u == kUnits.end()) return std::nullopt;
    total += n * u->second;
    i = k;
  }
  return total;
}

}  // namespace

TEST_CASE("NPD: the shipped custom-plugin-monitor config passes NPD's own checks, one rule per class",
          "[doctor][health]") {
  std::ifstream in(std::string(GP_SOURCE_DIR) + "/templates/npd-gpuprep-health.json");
  REQUIRE(in);
  const nlohmann::json c = nlohmann::json::parse(in);
  // NPD's Validate (pkg/custompluginmonitor/types/config.go): the custom plugin; every rule's timeout
  // within the global one; every permanent rule's condition among the default conditions.
  CHECK(c.at("plugin") == "custom");
  const auto& pc = c.at("pluginConfig");
  const std::optional<double> global = GoSeconds(pc.at("timeout").get<std::string>());
  REQUIRE(global);
  CHECK(*global <= 5.0);  // NPD's default global timeout
  REQUIRE(GoSeconds(pc.at("invoke_interval").get<std::string>()));
  CHECK(pc.at("max_output_length") == 80);
  CHECK(pc.at("concurrency").get<int>() >= 1);
  CHECK_FALSE(c.at("source").get<std::string>().empty());
  std::set<std::string> conditions;
  for (const auto& cond : c.at("conditions")) {
    CHECK_FALSE(cond.at("reason").get<std::string>().empty());
    CHECK_FALSE(cond.at("message").get<std::string>().empty());
    conditions.insert(cond.at("type").get<std::string>());
  }
  std::set<std::string> classes;
  HealthNvml nvml = EveryFault();
  for (const auto& rule : c.at("rules")) {
    const std::string type = rule.at("type");
    CHECK((type == "permanent" || type == "temporary"));
    if (type == "permanent") CHECK(conditions.count(rule.at("condition").get<std::string>()) == 1);
    const std::optional<double> t = GoSeconds(rule.at("timeout").get<std::string>());
    REQUIRE(t);
    CHECK(*t <= *global);
    // NPD stats the path: the one the package installs.
    CHECK(rule.at("path") == "/usr/bin/gpuprep");
    std::vector<std::string> args = rule.at("args").get<std::vector<std::string>>();
    REQUIRE(args.size() == 5);
    CHECK(std::vector<std::string>(args.begin(), args.begin() + 4) ==
          std::vector<std::string>{"doctor", "--health", "--npd", "--class"});
    classes.insert(args[4]);
    // The rule runs as written: NPD's protocol, within max_output_length.
    HealthRun r = RunOn("gen5-in-gen4", args, &nvml, nullptr);
    INFO(args[4] << ": " << r.out << r.err);
    CHECK((r.code == 0 || r.code == 1 || r.code == 2));
    CHECK(r.out.size() <= 81);
  }
  CHECK(classes == std::set<std::string>(doctor::HealthClasses().begin(), doctor::HealthClasses().end()));
}

TEST_CASE("doctor --health: this boot's journal is read for Xid events, the ring buffer kept when it fails",
          "[doctor][health]") {
  HealthNvml nvml;
  test::FakeCommandRunner runner;
  runner.On("journalctl", test::Exit(1, "", "No journal files were found.\n"));
  HealthRun r = RunOn("gen5-in-gen4", With(kNvmlClasses, {"--npd"}), &nvml, &runner);
  REQUIRE(runner.calls.size() == 1);
  CHECK(runner.calls[0].argv ==
        std::vector<std::string>{"journalctl", "-k", "-o", "export", "--no-pager", "-b"});
  CHECK(runner.calls[0].timeout <= std::chrono::milliseconds(2000));
  CHECK(r.code == 0);
}

TEST_CASE("doctor --health --since: the Xid history comes from the journal", "[doctor][health]") {
  HealthNvml nvml;
  test::FakeCommandRunner runner;
  runner.On("journalctl", test::Exit(0, ""));
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--npd", "--since", "-6h"}, &nvml, &runner);
  INFO(r.out << r.err);
  bool asked = false;
  for (const auto& c : runner.calls)
    if (!c.argv.empty() && c.argv[0] == "journalctl") asked = true;
  CHECK(asked);
  CHECK((r.code == 0 || r.code == 2));
}

TEST_CASE("health: the codes watch gives a lost or hardware-throttled GPU are doctor's health findings",
          "[doctor][health]") {
  CHECK(doctor::HealthClass(health_codes::kGpuLost) == "bus");
  for (const char* code :
       {health_codes::kClocksPowerBrake, health_codes::kClocksThermal, health_codes::kClocksHwSlowdown})
    CHECK(doctor::HealthClass(code) == "clocks");
  // Every reason of a throttled verdict maps to a clocks finding or to none.
  for (const char* reason : {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
                             "sw_thermal_slowdown", "power_limit_below_default", "sw_power_cap_below_limit"})
    for (const std::string& code : watch::HealthCodesOf({reason}))
      CHECK(doctor::HealthClass(code) == "clocks");
}
