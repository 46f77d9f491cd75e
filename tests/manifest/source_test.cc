// The manifest argument classified once (ManifestSource): a URL, an embedded stack's name, or a file.
#include "manifest/source.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "sys/fs.h"
#include "sys/host_info.h"
#include "util/strings.h"

using gp::test::ErrorOf;
namespace m = gp::manifest;
using Kind = m::ManifestSource::Kind;

TEST_CASE("ShapeOf: scheme:// is a URL, a '/' or a YAML ending a path, anything else a name", "[manifest]") {
  CHECK(m::ShapeOf("https://example.com/s.yaml") == m::SourceShape::kUrl);
  CHECK(m::ShapeOf("ftp://example.com/s") == m::SourceShape::kUrl);  // a URL; CheckUrl refuses to fetch it
  CHECK(m::ShapeOf("site/a://b") == m::SourceShape::kPath);
  CHECK(m::ShapeOf("://x") == m::SourceShape::kPath);
  CHECK(m::ShapeOf("stack.yml") == m::SourceShape::kPath);
  CHECK(m::ShapeOf("/etc/gpuprep/stack") == m::SourceShape::kPath);
  CHECK(m::ShapeOf("hopper-r580-cuda13.0") == m::SourceShape::kName);
}

TEST_CASE("ParseManifestSource: embedded name, absolute file or URL, decided once", "[manifest]") {
  gp::test::TempRoot root;
  gp::sys::DiskFs fs{root.path()};
  const std::string name = m::EmbeddedStackNames().front();

  const m::ManifestSource e = m::ParseManifestSource(name, &fs);
  CHECK(e.kind == Kind::kEmbedded);
  CHECK(e.value == name);
  CHECK(e.embedded());

  const m::ManifestSource u = m::ParseManifestSource("https://example.com/site.yaml", &fs);
  CHECK(u.kind == Kind::kUrl);
  CHECK(u.url());
  CHECK(u.value == "https://example.com/site.yaml");

  const m::ManifestSource rel = m::ParseManifestSource("site/a.yaml", &fs);  // need not exist yet
  CHECK(rel.kind == Kind::kFile);
  CHECK(rel.value == gp::sys::AbsoluteFromCwd("site/a.yaml"));
  CHECK(rel.value[0] == '/');
  CHECK(rel.written == "site/a.yaml");
  CHECK(m::ParseManifestSource("/abs/b.yml", nullptr).value == "/abs/b.yml");

  // A bare word that is no embedded stack is a file only when one of that name is there.
  CHECK(gp::StartsWith(ErrorOf([&] { m::ParseManifestSource("mystack", &fs); }),
                       "2 no embedded stack or file named \"mystack\" ("));
  root.Write(gp::sys::AbsoluteFromCwd("mystack"), "kind: Stack\n");
  const m::ManifestSource bare = m::ParseManifestSource("mystack", &fs);
  CHECK(bare.kind == Kind::kFile);
  CHECK(bare.value == gp::sys::AbsoluteFromCwd("mystack"));
  CHECK(ErrorOf([&] { m::ParseManifestSource("", &fs); }) == "2 empty stack name");
}

TEST_CASE("LoadStack takes the parsed source: an embedded one is the cached stack", "[manifest]") {
  const std::string name = m::EmbeddedStackNames().front();
  const m::Stack& by_name = m::LoadStack(name, m::LoadContext{});
  const m::Stack by_source = m::LoadStack(m::ParseManifestSource(name, nullptr), m::LoadContext{});
  CHECK(by_source.name == by_name.name);
  CHECK(by_source.source == "embedded:" + name);
}
