// Embedded manifests are parsed at build time (tools/gpuprep_embed.cc -> manifest/prebuilt.h): the tree
// gpuprep rebuilds from the generated table must be exactly what the yaml-cpp path (ParseTree) gives for
// the same text, and a broken embedded file must stop the build with its PATH:LINE:COL.
#include "manifest/prebuilt.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"
#include "sys/process.h"
#include "util/embedded.h"
#include "util/strings.h"

namespace m = gp::manifest;
namespace fs = std::filesystem;

namespace {

std::string MarkText(const m::Mark& mark) { return mark.str(); }

// "" when equal, else where the first difference is ("root.gpus[3].arch: scalar \"a\" vs \"b\"").
std::string Diff(const m::Node& a, const m::Node& b, const std::string& at = "root") {
  if (a.kind != b.kind) return at + ": kind " + m::KindName(a.kind) + " vs " + m::KindName(b.kind);
  if (MarkText(a.mark) != MarkText(b.mark))
    return at + ": mark " + MarkText(a.mark) + " vs " + MarkText(b.mark);
  if (a.scalar != b.scalar) return at + ": scalar \"" + a.scalar + "\" vs \"" + b.scalar + "\"";
  if (a.items.size() != b.items.size())
    return at + ": " + std::to_string(a.items.size()) + " vs " + std::to_string(b.items.size()) + " items";
  for (size_t i = 0; i < a.items.size(); ++i)
    if (auto d = Diff(a.items[i], b.items[i], at + "[" + std::to_string(i) + "]"); !d.empty()) return d;
  if (a.fields.size() != b.fields.size() || a.key_marks.size() != b.key_marks.size())
    return at + ": " + std::to_string(a.fields.size()) + " vs " + std::to_string(b.fields.size()) + " keys";
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const std::string here = at + "." + a.fields[i].first;
    if (a.fields[i].first != b.fields[i].first) return here + ": key vs \"" + b.fields[i].first + "\"";
    if (MarkText(a.key_marks[i]) != MarkText(b.key_marks[i]))
      return here + ": key mark " + MarkText(a.key_marks[i]) + " vs " + MarkText(b.key_marks[i]);
    if (auto d = Diff(a.fields[i].second, b.fields[i].second, here); !d.empty()) return d;
  }
  return "";
}

}  // namespace

TEST_CASE("prebuilt trees: every embedded manifest equals its yaml-cpp parse", "[manifest]") {
  auto files = gp::ListEmbedded("manifests/");
  int yaml = 0;
  for (const gp::EmbeddedFile* f : files) {
    if (!gp::EndsWith(f->path, ".yaml")) continue;
    INFO(f->path);
    ++yaml;
    std::optional<m::Node> built = m::PrebuiltTree(f->path);
    REQUIRE(built);
    m::Node parsed = m::ParseTree(std::string(f->data, f->size), f->path);
    CHECK(Diff(*built, parsed) == "");
    CHECK(built->mark.str() == std::string(f->path) + ":" + std::to_string(parsed.mark.line) + ":" +
                                   std::to_string(parsed.mark.col));
  }
  CHECK(yaml >= 8);  // compat, three stacks, four profiles
}

TEST_CASE("prebuilt trees: the comparison sees one column, key or scalar off", "[manifest]") {
  m::Node tree = *m::PrebuiltTree("manifests/compat.yaml");
  CHECK(Diff(tree, tree) == "");
  m::Node moved = tree;
  REQUIRE(moved.Find("gpus"));
  REQUIRE(!moved.Find("gpus")->items.empty());
  m::Node& gpu = moved.Find("gpus")->items[0];
  gpu.Find("name")->mark.col += 1;
  CHECK(Diff(tree, moved).rfind("root.gpus[0].name: mark manifests/compat.yaml:", 0) == 0);
  m::Node renamed = tree;
  renamed.fields[0].first = "apiversion";
  CHECK(Diff(tree, renamed) == "root.apiVersion: key vs \"apiversion\"");
  m::Node edited = tree;
  edited.Find("kind")->scalar = "Stack";
  CHECK(Diff(tree, edited) == "root.kind: scalar \"Compat\" vs \"Stack\"");
}

TEST_CASE("prebuilt trees: only embedded manifests have one", "[manifest]") {
  CHECK(!m::PrebuiltTree("manifests/stacks/nope.yaml"));
  CHECK(!m::PrebuiltTree("templates/compose.yaml.tmpl"));
  CHECK(!m::PrebuiltTree("compat.yaml"));
  CHECK(m::PrebuiltTree("manifests/stacks/hopper-r580-cuda13.0.yaml"));
}

TEST_CASE("gpuprep_embed: a broken embedded manifest fails the build with PATH:LINE:COL", "[manifest]") {
  const std::string tool = (fs::path(GP_BINARY).parent_path() / "gpuprep_embed").string();
  const gp::test::TempDir tmp("gp-embed");
  const fs::path dir = tmp.path;
  auto write = [&](const std::string& rel, const std::string& text) { tmp.Write(rel, text); };
  auto run = [&](std::vector<std::string> files) {
    gp::sys::Command cmd;
    cmd.argv = {tool, (dir / "out.cc").string(), dir.string()};
    cmd.argv.insert(cmd.argv.end(), files.begin(), files.end());
    return gp::sys::RealCommandRunner().Run(cmd);
  };
  write("manifests/ok.yaml", "a: \"x?\\\"\"\nb: [1, {c: d}]\n");
  write("manifests/stacks/bad.yaml", "apiVersion: gpuprep/v1\nkind: Stack\nmetadata:\n  name: [unclosed\n");
  write("manifests/stacks/dup.yaml", "kind: Stack\nkind: Compat\n");

  auto r = run({"manifests/ok.yaml", "manifests/stacks/bad.yaml"});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "gpuprep_embed: error: manifests/stacks/bad.yaml:5:1: YAML syntax error: end of sequence flow "
        "not found\n");
  CHECK(!fs::exists(dir / "out.cc"));

  r = run({"manifests/stacks/dup.yaml"});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "gpuprep_embed: error: manifests/stacks/dup.yaml:2:1: duplicate key \"kind\"\n");

  r = run({"manifests/ok.yaml"});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  std::ifstream in(dir / "out.cc");
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // root map, then its two children (contiguous), then the list's items; keys and scalars are offsets into
  // one table of strings, each string once
  CHECK(out.find("  {3, 1, 1, 0, 0, 1, 1, 0, 0, 1, 2},\n"
                 "  {1, 1, 4, 0, 1, 1, 1, 1, 3, 0, 0},\n"
                 "  {2, 2, 4, 4, 1, 2, 1, 0, 0, 3, 2},\n") != std::string::npos);
  CHECK(out.find("extern const char kStrings[] =\n    \"ax\\077\\042b1cd\"\n    ;\n") != std::string::npos);
  CHECK(out.find("{\"manifests/ok.yaml\", 0},") != std::string::npos);
}
