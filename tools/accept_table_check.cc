// Build-time check of `gpuprep accept`'s expectation table: loads manifests/accept/expectations.tsv with the
// loader gpuprep runs (src/accept/table.cc) and checks every quoted figure against its excerpt. A broken
// table fails the build with PATH:LINE:COL. Usage: accept_table_check TABLE EXCERPT_DIR STAMP
#include <fstream>
#include <iostream>
#include <sstream>

#include "accept/table.h"
#include "util/error.h"

namespace {

std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: accept_table_check TABLE EXCERPT_DIR STAMP\n";
    return 2;
  }
  auto text = Slurp(argv[1]);
  if (!text) {
    std::cerr << argv[1] << ": cannot read\n";
    return 1;
  }
  try {
    const gp::accept::Table t = gp::accept::LoadTable(*text, argv[1]);
    const std::string dir = argv[2];
    auto problems = gp::accept::CheckExcerpts(t, [&](const std::string& n) { return Slurp(dir + "/" + n); });
    for (const auto& p : problems) std::cerr << p << "\n";
    if (!problems.empty()) return 1;
    std::ofstream(argv[3]) << t.values.size() << " values checked\n";
  } catch (const gp::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
