// doctor --health --prometheus FILE: the node_exporter textfile read back line by line as the exposition
// format's text parser reads it (families, labels and their escapes, no series twice), on the health fixture
// trees read as a live host whose NVML answers per bus id; hostile label values; the atomic write.
#include "doctor/health_prom.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "apply/harness.h"
#include "doctor/health_kit.h"
#include "util/input.h"

using namespace gp;

namespace {

using test::EveryFault;
using test::HealthNvml;
using test::HealthRun;
using test::RunOn;

// What the exposition format's text parser would refuse or node_exporter would count twice, one problem a
// line ("" when none): every sample is NAME{LABELS} VALUE (no timestamp: the textfile collector refuses
// them) after its family's HELP and TYPE, each label value with only the format's escapes, each series once,
// the text valid UTF-8 ending in a line feed.
std::string ExpositionProblems(const std::string& text) {
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*)?\})? (-?[0-9]+(\.[0-9]+)?|NaN))");
  static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+)");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter))");
  std::string problems;
  if (InvalidUtf8At(text)) problems += "not valid UTF-8\n";
  if (text.empty() || text.back() != '\n') problems += "no final line feed\n";
  std::set<std::string> helped, typed, series;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, kHelp)) {
      if (!helped.insert(m[1]).second) problems += "HELP twice: " + line + "\n";
    } else if (std::regex_match(line, m, kType)) {
      if (!typed.insert(m[1]).second) problems += "TYPE twice: " + line + "\n";
    } else if (std::regex_match(line, m, kSample)) {
      if (!helped.count(m[1]) || !typed.count(m[1])) problems += "no HELP or TYPE before: " + line + "\n";
      if (!series.insert(line.substr(0, line.rfind(' '))).second) problems += "series twice: " + line + "\n";
    } else {
      problems += "not a sample, HELP or TYPE line: " + line + "\n";
    }
  }
  return problems;
}

// The value of the one sample line starting with `series` ("name{labels}"); "" when there is none.
std::string Value(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return "";
  const size_t from = at + series.size() + 2;
  return text.substr(from, text.find('\n', from) - from);
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const std::string kGpu0 = R"(gpu="0",UUID="",pci_bus_id="0000:18:00.0",modelName=)";

}  // namespace

TEST_CASE("health textfile: every fault at once, per GPU and code, state sets that sum to one",
          "[doctor][health][prometheus]") {
  test::TempRoot dir;
  const std::string prom = dir.path() + "/gpuprep-health.prom";
  HealthNvml nvml = EveryFault();
  HealthRun r =
      RunOn("gen5-in-gen4",
            {"doctor", "--health", "--class", "bus,memory,clocks,nvlink,recovery", "--prometheus", prom},
            &nvml, nullptr);
  INFO(r.out << r.err);
  CHECK(r.code == 1);  // a failed check, as --health
  CHECK(r.out.rfind("gpu.lost: GPU 0 (0000:18:00.0)", 0) == 0);
  CHECK(r.out.find('\n') == r.out.size() - 1);  // one line for the journal
  const std::string text = Slurp(prom);
  INFO(text);
  CHECK(ExpositionProblems(text).empty());
  CHECK(Value(text, R"(gpuprep_health_verdict{verdict="problem"})") == "1");
  CHECK(Value(text, R"(gpuprep_health_verdict{verdict="ok"})") == "0");
  CHECK(Value(text, R"(gpuprep_health_verdict{verdict="unknown"})") == "0");
  for (const char* cls : {"bus", "memory", "nvlink", "recovery"}) {
    INFO(cls);
    CHECK(Value(text, std::string(R"(gpuprep_health_check_status{class=")") + cls + R"(",status="fail"})") ==
          "1");
  }
  CHECK(Value(text, R"(gpuprep_health_check_status{class="clocks",status="warn"})") == "1");
  // xid was not chosen: no series for it.
  CHECK(text.find(R"(class="xid")") == std::string::npos);
  // Each finding with its GPU's labels, class, code and status.
  CHECK(text.find("gpuprep_health_findings{" + kGpu0) != std::string::npos);
  CHECK(text.find(R"(pci_bus_id="0000:18:00.0",modelName=)") != std::string::npos);
  CHECK(std::regex_search(
      text,
      std::regex(
          R"(\ngpuprep_health_findings\{gpu="0",UUID="",pci_bus_id="0000:18:00.0",modelName="[^"]+",class="bus",code="gpu.lost",status="fail"\} 1\n)")));
  CHECK(std::regex_search(
      text,
      std::regex(
          R"(\ngpuprep_health_findings\{gpu="2",[^}]*,class="clocks",code="gpu.clocks-power-brake",status="warn"\} 1\n)")));
  CHECK(std::regex_search(
      text,
      std::regex(
          R"(\ngpuprep_health_findings\{gpu="3",[^}]*,class="recovery",code="driver.recovery-action",status="fail"\} 1\n)")));
  CHECK(std::regex_search(text,
                          std::regex(R"(\ngpuprep_health_gpu_status\{gpu="1",[^}]*,status="fail"\} 1\n)")));
  CHECK(Value(text, "gpuprep_health_gpus") == "4");
  // Every state set has exactly one member at 1 per label set.
  for (const char* family : {"gpuprep_health_gpu_status{", "gpuprep_health_check_status{"}) {
    std::istringstream in(text);
    std::string line;
    std::map<std::string, int> ones;
    while (std::getline(in, line))
      if (line.rfind(family, 0) == 0) ones[line.substr(0, line.find(",status="))] += line.back() == '1';
    CHECK(!ones.empty());
    for (const auto& [labels, n] : ones) {
      INFO(labels);
      CHECK(n == 1);
    }
  }
  // Run time: when (within this test's run) and how long.
  const double ts = std::stod(Value(text, "gpuprep_health_last_run_timestamp_seconds"));
  CHECK(ts > 1.7e9);
  CHECK(std::stod(Value(text, "gpuprep_health_run_duration_seconds")) <= r.seconds + 0.01);
}

TEST_CASE("health textfile: two findings of one code on one GPU are one series with their count",
          "[doctor][health][prometheus]") {
  // Both thermal bits give gpu.clocks-thermal twice for one GPU: one series, value 2, not a duplicate.
  test::TempRoot dir;
  const std::string prom = dir.path() + "/h.prom";
  HealthNvml nvml;
  sys::NvmlBusAnswer hot{"0000:2a:00.0", 0, HealthNvml::Healthy()};
  hot.health.clock_reasons = 0x40 | 0x20;
  nvml.answers = {{hot.pci, hot}};
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--class", "clocks", "--prometheus", prom},
                      &nvml, nullptr);
  CHECK(r.code == 0);  // warnings only
  CHECK(r.out == "ok: 4 GPUs healthy, 2 warnings (gpu.clocks-thermal)\n");
  const std::string text = Slurp(prom);
  INFO(text);
  CHECK(ExpositionProblems(text).empty());
  CHECK(std::regex_search(
      text,
      std::regex(
          R"(\ngpuprep_health_findings\{gpu="1",[^}]*,code="gpu.clocks-thermal",status="warn"\} 2\n)")));
  CHECK(Value(text, R"(gpuprep_health_verdict{verdict="ok"})") == "1");
}

TEST_CASE("health textfile: NVML that answers nothing is unknown, not healthy; exit 0 as --health",
          "[doctor][health][prometheus]") {
  test::TempRoot dir;
  const std::string prom = dir.path() + "/h.prom";
  HealthNvml absent;
  absent.loaded = false;
  HealthRun r =
      RunOn("gen5-in-gen4",
            {"doctor", "--health", "--class", "bus,memory,clocks,nvlink,recovery", "--prometheus", prom},
            &absent, nullptr);
  CHECK(r.code == 0);
  CHECK(r.out.rfind("unknown: NVML answered for no GPU", 0) == 0);
  const std::string text = Slurp(prom);
  INFO(text);
  CHECK(ExpositionProblems(text).empty());
  CHECK(Value(text, R"(gpuprep_health_verdict{verdict="unknown"})") == "1");
  CHECK(Value(text, R"(gpuprep_health_check_status{class="memory",status="unknown"})") == "1");
  CHECK(Value(text, "gpuprep_health_gpu_status{" + kGpu0 + R"("H100 80GB HBM3",status="unknown"})") == "1");
  CHECK(text.find("gpuprep_health_findings") == std::string::npos);

  // The healthy host: ok everywhere, no finding series.
  HealthNvml healthy;
  r = RunOn("gen5-in-gen4",
            {"doctor", "--health", "--class", "bus,memory,clocks,nvlink,recovery", "--prometheus", prom},
            &healthy, nullptr);
  CHECK(r.code == 0);
  const std::string ok = Slurp(prom);
  INFO(ok);
  CHECK(Value(ok, R"(gpuprep_health_verdict{verdict="ok"})") == "1");
  CHECK(Value(ok, R"(gpuprep_health_check_status{class="bus",status="ok"})") == "1");
  CHECK(ok.find("gpuprep_health_findings") == std::string::npos);
}

TEST_CASE("health textfile: hostile label values cannot break a line, a label or UTF-8",
          "[doctor][health][prometheus]") {
  probe::HostFacts host;
  probe::Gpu g;
  g.index = 0;
  g.pci = "0000:18:00.0";
  g.uuid = "GPU-\"},x=\"1\\\nevil 1\n";
  g.name = std::string("H100 \xff\xfe \xe2\x80\xae ") + "\"} 1\n# TYPE x counter";
  host.gpus = {g};
  doctor::HealthVerdict v;
  v.kind = doctor::HealthVerdict::Kind::kProblem;
  verdict::Finding f;
  f.status = verdict::Status::kFail;
  f.code = "gpu.lost";
  f.gpu_pci = g.pci;
  v.failures = {f};
  const std::string text = doctor::HealthProm(v, host, {}, {1733300000123, 45});
  INFO(text);
  CHECK(ExpositionProblems(text).empty());
  CHECK(text.find(R"(UUID="GPU-\"},x=\"1\\\\nevil 1\\n")") != std::string::npos);
  CHECK(text.find(R"(modelName="H100 \\xFF\\xFE \\xE2\\x80\\xAE \"} 1\\n# TYPE x counter")") !=
        std::string::npos);
  CHECK(Value(text, "gpuprep_health_last_run_timestamp_seconds") == "1733300000.123");
  CHECK(Value(text, "gpuprep_health_run_duration_seconds") == "0.045");
  CHECK(PrometheusLabelValue("a\\b\"c\nd") == R"(a\\b\"c\\nd)");
}

TEST_CASE("health textfile: written beside the file and renamed over it, nothing left behind",
          "[doctor][health][prometheus]") {
  test::TempRoot dir;
  const std::string prom = dir.path() + "/gpuprep-health.prom";
  dir.Write("/gpuprep-health.prom", "old contents\n");
  std::ifstream reader(prom);  // a scrape in progress keeps reading the file it opened
  HealthNvml healthy;
  HealthRun r = RunOn("gen5-in-gen4", {"doctor", "--health", "--class", "bus", "--prometheus", prom},
                      &healthy, nullptr);
  CHECK(r.code == 0);
  std::string old;
  std::getline(reader, old);
  CHECK(old == "old contents");  // renamed over, not truncated and rewritten
  CHECK(Slurp(prom).rfind("# HELP gpuprep_health_verdict ", 0) == 0);
  CHECK(dir.fs().List("/") == std::vector<std::string>{"gpuprep-health.prom"});
  struct stat st {};
  REQUIRE(::stat(prom.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
}

TEST_CASE("health textfile: bad usage is exit 2 before anything is probed", "[doctor][health][prometheus]") {
  test::TempRoot dir;
  HealthNvml healthy;
  const std::string prom = dir.path() + "/h.prom";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"doctor", "--prometheus", prom},
           {"doctor", "--health", "--npd", "--prometheus", prom},
           {"doctor", "--health", "--slurm", "--prometheus", prom},
           {"doctor", "--health", "--json", "--prometheus", prom},
           {"doctor", "--health", "--prometheus", dir.path() + "/h.txt"},
           {"doctor", "--health", "--prometheus", dir.path() + "/missing/h.prom"},
           {"doctor", "--health", "--prometheus", dir.path() + "/.prom"},
       }) {
    HealthRun r = RunOn("gen5-in-gen4", args, &healthy, nullptr);
    INFO(args.back() << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.rfind("gpuprep: error: --", 0) == 0);
    CHECK(dir.fs().List("/").empty());
  }
}
