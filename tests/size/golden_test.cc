// The recommendation for every model of the shipped table (full, LoRA and QLoRA for transformers, at the
// default sequence length or the model's positions) on every board of the catalogue, against
// tests/size/golden/recommend.txt (reviewed by hand against the arithmetic when it was written). A change to
// the estimate, the search or the catalogue shows up here as a diff; GPUPREP_UPDATE_GOLDEN=1 rewrites it.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/size_inputs.h"
#include "manifest/loader.h"
#include "size/recommend.h"
#include "size/task_args.h"
#include "util/error.h"

namespace {

std::string Gb(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", b / 1e9);
  return buf;
}

std::string Line(const std::string& task, const gp::size::BoardRow& row) {
  std::string s = task + " | " + row.board.name + " | ";
  if (!row.best) return s + "does not fit";
  const auto& o = *row.best;
  s += std::to_string(o.servers) + "x" + std::to_string(o.per_server) + " " + gp::size::Name(o.strategy);
  if (o.tp > 1) s += " tp" + std::to_string(o.tp);
  s += " " + Gb(o.at.per_gpu) + (o.at.lower_bound ? "+" : "") + " of " + Gb(o.memory) + " GB | " + o.link;
  if (o.traffic.bytes > 0) s += " | " + Gb(o.traffic.bytes) + " GB/step";
  if (o.traffic.network_bytes > 0) s += ", network " + Gb(o.traffic.network_bytes);
  return s;
}

}  // namespace

TEST_CASE("recommend: golden, every shipped model on every board", "[size][recommend][golden]") {
  const auto boards = gp::cli::CatalogueBoards(gp::manifest::EmbeddedCompat());
  std::ostringstream out;
  for (const auto& m : gp::size::ModelTable()) {
    std::vector<std::string> methods = {"full"};
    if (m.family != gp::size::Family::kVision) methods = {"full", "lora", "qlora"};
    for (const std::string& method : methods) {
      std::string args = "--model " + m.name + " --method " + method;
      if (m.positions > 0 && m.positions < 2048)
        args += " --seq " + std::to_string(m.positions);  // BERT: 512
      gp::size::Task t;
      try {
        t = gp::test::TaskFromArgs(args);
      } catch (const gp::Error& e) {
        out << m.name << " " << method << " | refused: " << e.what() << "\n";
        continue;
      }
      const gp::size::Recommendation r = gp::size::Recommend(t, boards);
      if (!r.not_recommended.empty()) out << m.name << " " << method << " | none recommended\n";
      for (const auto& row : r.rows) out << Line(m.name + " " + method, row) << "\n";
    }
  }
  const std::string path = std::string(GP_SOURCE_DIR) + "/tests/size/golden/recommend.txt";
  if (std::getenv("GPUPREP_UPDATE_GOLDEN")) {
    std::ofstream(path) << out.str();
    WARN("rewrote " << path);
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream want;
  want << in.rdbuf();
  std::istringstream got_lines(out.str()), want_lines(want.str());
  std::string g, w;
  int line = 0;
  while (true) {
    const bool more_g = static_cast<bool>(std::getline(got_lines, g));
    const bool more_w = static_cast<bool>(std::getline(want_lines, w));
    ++line;
    if (!more_g && !more_w) break;
    INFO("line " << line);
    REQUIRE(g == w);
  }
}
