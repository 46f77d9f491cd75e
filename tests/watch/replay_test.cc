// watch --replay in-process: a committed recording gives back the verdicts and summary it holds, byte for
// byte; a recording cut short or inconsistent is handled as documented.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/cli.h"
#include "support/temp_dir.h"
#include "util/error.h"
#include "watch/jsonl.h"
#include "watch/run.h"

using namespace gp;

namespace {
struct Collect : watch::Output {
  std::vector<std::string> lines;
  void OnSample(const watch::Sample&) override {}
  void OnVerdicts(const std::vector<watch::Verdict>& v) override {
    for (const auto& x : v) lines.push_back(watch::VerdictJson(x).dump());
  }
  void OnSummary(const watch::Summary& s) override { lines.push_back(watch::SummaryJson(s).dump()); }
};

std::vector<std::string> FileLines(const std::string& path, const char* type) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);)
    if (l.find(std::string("\"type\":\"") + type + "\"") != std::string::npos) out.push_back(l);
  return out;
}
}  // namespace

TEST_CASE("replay: a recording gives back its own verdicts and summary", "[watch][replay]") {
  const std::string path = std::string(GP_FIXTURES) + "/watch/hung_3gpu.jsonl";
  watch::WatchOptions o;
  o.window_given = false;  // the recording's window (1 s)
  Collect c;
  CHECK(watch::Replay(path, o, c) == kExitOk);
  std::vector<std::string> want = FileLines(path, "verdict");
  auto summary = FileLines(path, "summary");
  want.insert(want.end(), summary.begin(), summary.end());
  REQUIRE(want.size() == 7);
  REQUIRE(c.lines.size() == want.size());
  // The recording predates per-job grouping: the replay's records are its own, byte for byte, plus the
  // "jobs" keys, whose processes are "unknown" (no job in the recording).
  for (size_t i = 0; i < want.size(); ++i) {
    auto j = nlohmann::ordered_json::parse(c.lines[i]);
    REQUIRE(j.contains("jobs"));
    if (j["type"] == "verdict") CHECK(j["jobs"] == nlohmann::ordered_json::array({"unknown"}));
    if (j["type"] == "summary") {
      REQUIRE(j["jobs"].size() == 1);
      CHECK(j["jobs"][0]["key"] == "unknown");
      CHECK(j["jobs"][0]["gpus"] == nlohmann::ordered_json::array({5, 6, 7}));
    }
    j.erase("jobs");
    CHECK(j.dump() == want[i]);
  }
  CHECK(c.lines[0].find("\"verdict\":\"hung_collective\"") != std::string::npos);
  CHECK(c.lines[0].find("\"straggler_gpu\":{\"index\":7") != std::string::npos);
}

// A recording made before watch gave doctor's health codes (tests/fixtures/watch/README.md): it replays to
// its own verdicts and summary, byte for byte, plus the codes: the braked GPU's throttled verdicts carry
// gpu.clocks-power-brake, the lost GPU's summary entry gpu.lost; the exit is still 1.
TEST_CASE("replay: a recording made before the health codes replays unchanged, and gains them",
          "[watch][replay]") {
  const std::string path = std::string(GP_FIXTURES) + "/watch/brake_then_lost.jsonl";
  {  // truly made before the codes
    std::ifstream f(path);
    const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(all.find("\"state\":\"lost\"") != std::string::npos);
    CHECK(all.find("health_codes") == std::string::npos);
    CHECK(all.find("gpu.lost") == std::string::npos);
  }
  watch::WatchOptions o;
  o.window_given = false;  // the recording's window (1 s)
  Collect c;
  CHECK(watch::Replay(path, o, c) == kExitFailed);
  std::vector<std::string> want = FileLines(path, "verdict");
  auto summary = FileLines(path, "summary");
  want.insert(want.end(), summary.begin(), summary.end());
  REQUIRE(want.size() == 3);
  REQUIRE(c.lines.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto j = nlohmann::ordered_json::parse(c.lines[i]);
    CHECK(j["schema"] == 1);
    if (j["type"] == "verdict") {
      CHECK(j["gpu"]["index"] == 0);
      CHECK(j["verdict"] == "throttled");
      CHECK(j["health_codes"] == nlohmann::ordered_json::array({"gpu.clocks-power-brake"}));
      j.erase("health_codes");
    } else {
      REQUIRE(j["lost_gpus"].size() == 1);
      CHECK(j["lost_gpus"][0]["index"] == 1);
      CHECK(j["lost_gpus"][0]["code"] == "gpu.lost");
      j["lost_gpus"][0].erase("code");
    }
    CHECK(j.dump() == want[i]);
  }
}

TEST_CASE("replay: a recording without summary, or with changing GPUs", "[watch][replay]") {
  const std::string full = std::string(GP_FIXTURES) + "/watch/hung_3gpu.jsonl";
  std::vector<std::string> samples = FileLines(full, "sample");
  REQUIRE(samples.size() >= 6);
  std::string cut;
  for (const auto& s : samples) cut += s + "\n";
  const test::TempDir dir("gpuprep-replay");
  const std::string cut_path = dir.Write("cut.jsonl", cut);
  watch::WatchOptions o;
  o.window_given = false;
  Collect c;
  CHECK(watch::Replay(cut_path, o, c) == kExitOk);
  CHECK(c.lines.back().find("the recording has no summary record") != std::string::npos);
  // A second sample naming other GPUs is not the same run.
  std::string other = samples[1];
  other.replace(other.find("\"index\":5"), 9, "\"index\":4");
  const std::string bad_path = dir.Write("bad.jsonl", samples[0] + "\n" + other + "\n");
  Collect d;
  try {
    watch::Replay(bad_path, o, d);
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()) == bad_path + ":2:1: gpus: not the GPUs of the first sample, in its order");
  }
}

TEST_CASE("replay: --window shorter than two of the recording's intervals is refused, as live",
          "[watch][replay]") {
  const std::string full = std::string(GP_FIXTURES) + "/watch/hung_3gpu.jsonl";
  watch::WatchOptions o;
  o.window_given = true;
  o.window_ms = 1;
  Collect c;
  try {
    watch::Replay(full, o, c);
    FAIL("no error");
  } catch (const FlagError& e) {
    CHECK(std::string(e.what()).rfind("--window: at least two intervals", 0) == 0);
  }
}

TEST_CASE("replay: errors name the recording as given, not its absolute path", "[watch][replay]") {
  const test::TempDir dir("gpuprep-replay-dir");
  dir.Write("rec.jsonl", "{\n");
  char here[4096];
  REQUIRE(::getcwd(here, sizeof here));
  REQUIRE(::chdir(dir.path.c_str()) == 0);
  auto r = test::Gpuprep({"watch", "--replay", "rec.jsonl"});
  REQUIRE(::chdir(here) == 0);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("gpuprep: error: rec.jsonl:1:", 0) == 0);
}

// A real H200 (tests/fixtures/device/h200): a job that ran bf16 matrix products, then held its memory
// idle, then starved its GPU from one busy CPU thread, then ran the products again, 12 s each, judged
// every 10 s. At full load that GPU sits at its 700 W limit with the SW power cap on, as designed: no
// window of the products is "throttled".
TEST_CASE("replay: a real H200 job's phases give their verdicts", "[watch][replay]") {
  const std::string path = std::string(GP_FIXTURES) + "/device/h200/watch.jsonl";
  watch::WatchOptions o;
  o.window_given = false;  // the recording's window (10 s)
  Collect c;
  CHECK(watch::Replay(path, o, c) == kExitOk);
  std::vector<std::string> verdicts;
  for (const auto& l : c.lines) {
    auto j = nlohmann::ordered_json::parse(l);
    if (j["type"] == "verdict") verdicts.push_back(j["verdict"].get<std::string>());
  }
  INFO(c.lines.size() << " records");
  REQUIRE(verdicts.size() == 5);
  // 38.9-48.9: 1.6 s before the job, then the products at the power limit.
  CHECK(verdicts[0] != "throttled");
  // 58.9-68.9: memory held, nothing launched (then 4 s of the starved phase).
  CHECK(verdicts[2] == "idle_memory_held");
  // 68.9-78.9: one CPU thread feeds tiny kernels.
  CHECK(verdicts[3] == "input_bound");
  // 78.9-88.9: the products again.
  CHECK(verdicts[4] == "healthy");
  for (const auto& v : verdicts) CHECK(v != "throttled");
}
