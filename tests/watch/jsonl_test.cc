// The JSON Lines records: what is written reads back as the same sample (so a replay judges what the
// live run judged), times are RFC 3339 UTC, and a recording that is not one is refused with its line.
#include "watch/jsonl.h"

#include <catch2/catch.hpp>

#include "util/error.h"
#include "watch/job.h"
#include "watch/rules.h"
#include "watch/synthetic.h"

using namespace gp;

namespace {
std::string Line(const watch::Sample& s) { return watch::SampleJson(s).dump(); }

std::string ErrorOf(const std::string& line) {
  try {
    watch::ParseRecord(line, "rec.jsonl", 3);
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("jsonl: RFC 3339 UTC with milliseconds, both ways", "[watch][jsonl]") {
  CHECK(watch::Rfc3339(0) == "1970-01-01T00:00:00.000Z");
  CHECK(watch::Rfc3339(1700000000123LL) == "2023-11-14T22:13:20.123Z");
  CHECK(watch::Rfc3339(951782400000LL) == "2000-02-29T00:00:00.000Z");
  CHECK(watch::ParseRfc3339("2023-11-14T22:13:20.123Z") == 1700000000123LL);
  CHECK_FALSE(watch::ParseRfc3339("2023-02-30T00:00:00.000Z"));
  CHECK_FALSE(watch::ParseRfc3339("2023-11-14T22:13:20Z"));
  CHECK_FALSE(watch::ParseRfc3339("2023-11-14 22:13:20.123Z"));
}

TEST_CASE("jsonl: a sample reads back as itself, and judges the same", "[watch][jsonl]") {
  auto window = test::Window(
      3, 6,
      [](watch::GpuSample& g, int i, unsigned u) {
        g.duty_pct = 100.0 / 3 + i;  // no short decimal form
        g.power_cap_ratio = 0.1 * u + 1e-9;
        g.clock_event_reasons = 0x8000000000000004ull;
        g.mig_instances = {{1, watch::Gpm{0.5, std::nullopt, 0.25, 0.125}}};
        g.processes->push_back({77, std::nullopt, 3u});
        if (u == 0)
          (*g.processes)[0].job =
              watch::JobFromProcCgroup("0::/system.slice/slurmstepd.scope/job_9/step_0\n");
        if (u == 1) (*g.processes)[0].job = watch::UnknownJob("/proc/PID/cgroup cannot be read");
        g.process_entry_bytes = 32;
        if (u == 2) g.state = watch::GpuState::kGap;
      },
      [](watch::HostSample& h, int i) {
        h.unattributed_pids = {9};
        h.processes[0].threads = {{1000, "python3", 'R', 99.5}, {1001, "pt_data_pin", 'S', std::nullopt}};
        h.processes[0].cgroup_cpu_limit = 2.5;
        h.processes[0].cgroup_nr_throttled = 3;
        if (i == 1) h.pressure.reset();
      });
  std::vector<watch::Sample> back;
  for (const auto& s : window) {
    const std::string line = Line(s);
    CHECK(line.find('\n') == std::string::npos);
    watch::Record r = watch::ParseRecord(line, "rec.jsonl", 1);
    REQUIRE(r.type == watch::Record::Type::kSample);
    CHECK(Line(r.sample) == line);
    back.push_back(r.sample);
  }
  auto a = watch::JudgeWindow(window, 0, 6000, {});
  auto b = watch::JudgeWindow(back, 0, 6000, {});
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    CHECK(watch::VerdictJson(a[i]).dump() == watch::VerdictJson(b[i]).dump());
}

TEST_CASE("jsonl: verdict and summary records carry the contract's keys", "[watch][jsonl]") {
  auto v = watch::JudgeWindow(test::Window(1, 3, nullptr), 1700000000000LL, 1700000003000LL, {});
  REQUIRE(v.size() == 1);
  auto j = watch::VerdictJson(v[0]);
  CHECK(j["type"] == "verdict");
  CHECK(j["schema"] == 1);
  CHECK(j["gpu"]["index"] == 0);
  CHECK(j["gpu"]["pci_bus_id"] == "0000:10:00.0");
  CHECK(j["window"]["start"] == "2023-11-14T22:13:20.000Z");
  CHECK(j["window"]["end"] == "2023-11-14T22:13:23.000Z");
  CHECK(j["verdict"] == "healthy");
  CHECK(j["confidence"] == "high");
  CHECK(j["straggler_gpu"].is_null());
  CHECK(j["reasons"].is_array());
  CHECK_FALSE(j.contains("health_codes"));  // none: the record keeps the shape it had before the codes
  v[0].kind = watch::VerdictKind::kThrottled;
  v[0].reasons = {"hw_slowdown", "hw_power_brake_slowdown"};
  v[0].health_codes = watch::HealthCodesOf(v[0].reasons);
  j = watch::VerdictJson(v[0]);
  CHECK(j["health_codes"] == nlohmann::ordered_json::array({"gpu.clocks-power-brake"}));
  CHECK(j.dump().find("\"reasons\":[\"hw_slowdown\",\"hw_power_brake_slowdown\"],\"health_codes\"") !=
        std::string::npos);
  watch::Summary s;
  s.lost_gpus.push_back({{2, "GPU-2", "0000:12:00.0"}, 1700000001000LL});
  s.reason = "the run (5s) is shorter than one window (1m)";
  auto js = watch::SummaryJson(s);
  CHECK(js["type"] == "summary");
  CHECK(js["judged"] == false);
  CHECK(js["lost_gpus"][0]["index"] == 2);
  CHECK(js["lost_gpus"][0]["time"] == "2023-11-14T22:13:21.000Z");
  CHECK(js["lost_gpus"][0]["code"] == "gpu.lost");
  CHECK(watch::ParseRecord(js.dump(), "r", 1).type == watch::Record::Type::kSummary);
}

TEST_CASE("jsonl: what is not a record is refused with its line", "[watch][jsonl]") {
  CHECK(ErrorOf("{") == "rec.jsonl:3:2: not a JSON record");
  CHECK(ErrorOf("[]") == "rec.jsonl:3:1: record: must be an object");
  CHECK(ErrorOf(R"({"type":"sample","schema":2})") == "rec.jsonl:3:1: schema: version 2 is not 1");
  CHECK(ErrorOf(R"({"type":"other","schema":1})") ==
        "rec.jsonl:3:1: type: \"other\" is not sample, verdict or summary");
  CHECK(ErrorOf(R"({"type":"summary","schema":1,"end":"yesterday"})") ==
        "rec.jsonl:3:1: end: not an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SS.mmmZ)");
  CHECK(ErrorOf("[[[[[[[[[[1]]]]]]]]]]") == "rec.jsonl:3:1: nested deeper than 8 levels");
  std::string good = Line(test::Window(1, 1, nullptr)[0]);
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return ErrorOf(s);
  };
  CHECK(broken("\"duty_pct\":100.0", "\"duty_pct\":101") == "rec.jsonl:3:1: gpus[0].duty_pct: out of range");
  CHECK(broken("\"state\":\"ok\"", "\"state\":\"fine\"") ==
        "rec.jsonl:3:1: gpus[0].state: must be ok, gap or lost");
  CHECK(broken("\"power_w\":695.0", "\"power_w\":-1") == "rec.jsonl:3:1: gpus[0].power_w: out of range");
  CHECK(broken("\"role\":\"gpu\"", "\"role\":\"root\"") ==
        "rec.jsonl:3:1: host.processes[0].role: must be gpu, loader or child");
  CHECK(broken("\"interval_ms\":1000", "\"interval_ms\":0") ==
        "rec.jsonl:3:1: sample: interval_ms and window_ms must be above 0");
}

TEST_CASE("jsonl: a number past a double's range is refused at its column, as bad input", "[watch][jsonl]") {
  const std::string line = R"({"type":"summary","schema":1,"end":1e400})";
  try {
    watch::ParseRecord(line, "rec.jsonl", 3);
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(e.code() == kExitUsage);
    CHECK(std::string(e.what()).rfind("rec.jsonl:3:36: ", 0) == 0);
  }
}

TEST_CASE("jsonl: a sample names each GPU index once", "[watch][jsonl]") {
  watch::Sample two = test::Window(2, 1, nullptr)[0];
  two.gpus[1].id.index = 0;
  CHECK(ErrorOf(Line(two)) == "rec.jsonl:3:1: gpus[1].index: GPU 0 is listed twice");
}

TEST_CASE("jsonl: a process's job is written, read back and checked; a record without one still reads",
          "[watch][jsonl]") {
  auto sample = test::Window(1, 1, nullptr)[0];
  const std::string old = Line(sample);  // a process without a job: as recordings before grouping
  CHECK(old.find("\"job\"") == std::string::npos);
  CHECK(!watch::ParseRecord(old, "r", 1).sample.gpus[0].processes->at(0).job);
  (*sample.gpus[0].processes)[0].job =
      watch::JobFromProcCgroup("0::/system.slice/docker-" + std::string(64, 'a') + ".scope\n");
  const std::string line = Line(sample);
  CHECK(line.find(R"("job":{"kind":"docker","id":")" + std::string(64, 'a') +
                  R"(","cgroup":"/system.slice/docker-)") != std::string::npos);
  auto back = watch::ParseRecord(line, "r", 1).sample.gpus[0].processes->at(0).job;
  REQUIRE(back);
  CHECK(back->Key() == "docker:" + std::string(64, 'a'));
  CHECK(Line(watch::ParseRecord(line, "r", 1).sample) == line);
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string s = line;
    s.replace(s.find(from), from.size(), to);
    return ErrorOf(s);
  };
  CHECK(broken(R"("kind":"docker")", R"("kind":"lxc")") ==
        "rec.jsonl:3:1: gpus[0].processes[0].job: kind: not slurm, kubernetes_pod, docker, containerd, "
        "cri-o, podman, "
        "systemd, cgroup or unknown");
  CHECK(broken(R"("id":"aaaa)", R"("id":"zaaa)") ==
        "rec.jsonl:3:1: gpus[0].processes[0].job: id: not a 64-hex-digit container id");
  CHECK(broken(R"("cgroup":"/system)", R"("cgroup":"\u001b[2J/system)") ==
        "rec.jsonl:3:1: gpus[0].processes[0].job: cgroup: too long, or holds control characters");
  CHECK(broken(R"("kind":"docker")", R"("kind":7)") ==
        "rec.jsonl:3:1: gpus[0].processes[0].job.kind: must be a string");
}

TEST_CASE("jsonl: a lost GPU's sample entry carries doctor's code, and reads back with or without it",
          "[watch][jsonl]") {
  auto window = test::Window(2, 1, [](watch::GpuSample& g, int, unsigned u) {
    if (u == 1) g = watch::GpuSample{g.id, g.name, watch::GpuState::kLost};
  });
  const std::string line = Line(window[0]);
  auto j = nlohmann::ordered_json::parse(line);
  CHECK_FALSE(j["gpus"][0].contains("code"));
  CHECK(j["gpus"][1]["state"] == "lost");
  CHECK(j["gpus"][1]["code"] == "gpu.lost");
  watch::Record r = watch::ParseRecord(line, "rec.jsonl", 1);
  CHECK(r.sample.gpus[1].state == watch::GpuState::kLost);
  CHECK(Line(r.sample) == line);
  // A recording made before the codes: the same entry without "code" reads back the same.
  j["gpus"][1].erase("code");
  CHECK(Line(watch::ParseRecord(j.dump(), "rec.jsonl", 1).sample) == line);
}
