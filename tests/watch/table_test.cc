// The live table: one row per GPU with its verdict, lines cut to the terminal's width (never inside a
// UTF-8 sequence), hostile names made safe, evidence lines bounded by the terminal's rows.
#include "watch/table.h"

#include <catch2/catch.hpp>
#include <sstream>

using namespace gp;

namespace {

watch::Sample EightGpus() {
  watch::Sample s;
  s.time_ms = 1000;
  for (unsigned i = 0; i < 8; ++i) {
    watch::GpuSample g;
    g.id = {i, "GPU-" + std::to_string(i), "0000:18:00.0"};
    g.name = "NVIDIA H100\x1b[31m \xc3\x9c";
    g.duty_pct = 100;
    g.power_w = 696;
    g.power_limit_enforced_w = 700;
    s.gpus.push_back(g);
  }
  s.gpus[3].state = watch::GpuState::kLost;
  return s;
}

std::vector<watch::Verdict> Verdicts() {
  std::vector<watch::Verdict> out;
  for (unsigned i = 0; i < 8; ++i) {
    watch::Verdict v;
    v.gpu = {i, "", ""};
    v.kind = i == 5 ? watch::VerdictKind::kInputBound : watch::VerdictKind::kHealthy;
    v.detail = "detail " + std::to_string(i);
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> Lines(const std::string& t) {
  std::vector<std::string> out;
  std::istringstream in(t);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("table: a row per GPU, cut to the width, names made safe", "[watch][table]") {
  const std::string t = watch::RenderTable(EightGpus(), Verdicts(), 100, 0, false);
  const auto lines = Lines(t);
  REQUIRE(lines.size() == 2 + 8 + 8);
  CHECK(t.find('\x1b') == std::string::npos);
  CHECK(lines[2].rfind("0   100%", 0) == 0);
  CHECK(lines[2].find("696/700") != std::string::npos);
  CHECK(lines[2].find("healthy") != std::string::npos);
  CHECK(lines[5].find("lost") != std::string::npos);
  CHECK(lines[10].rfind("GPU 5: input_bound", 0) == 0);  // not healthy: its evidence first
  for (const std::string& l : Lines(watch::RenderTable(EightGpus(), Verdicts(), 40, 0, false)))
    CHECK(l.size() <= 40);
  CHECK(watch::CutToColumns("ab\xc3\x9c", 3) == "ab");  // never half a character
  const std::string colored = watch::RenderTable(EightGpus(), Verdicts(), 100, 0, true);
  CHECK(colored.find("\x1b[32mhealthy\x1b[0m") != std::string::npos);
}

TEST_CASE("table: evidence bounded by the rows, the rest counted", "[watch][table]") {
  const auto lines = Lines(watch::RenderTable(EightGpus(), Verdicts(), 100, 14, false));
  CHECK(lines.size() == 13);  // the last row stays free
  CHECK(lines.back() == "... 6 more verdicts (a taller terminal shows them)");
  CHECK(watch::RenderTable(EightGpus(), Verdicts(), 100, 0, false).find("more verdicts") ==
        std::string::npos);
}
