// `source: redist` in a stack (manifest/redist_spec.h): what it reads, and every refused value word for word.
#include <catch2/catch.hpp>

#include "manifest/helpers.h"
#include "manifest/loader.h"

using gp::test::Edit;
using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {
const std::string kLine = "cudnn: {version: 8.9.7.29, cuda_major: 12}";  // line 11 of kMinimalStack

std::string Cudnn(const std::string& fields) {
  return Edit(kLine, "cudnn: {version: 9.12.0.46, cuda_major: 12, source: redist, " + fields + "}");
}
std::string StackError(const std::string& text) {
  return ErrorOf([&] { m::ParseStack(text, "stack.yaml", m::LoadContext{}); });
}
m::Stack Parse(const std::string& text) { return m::ParseStack(text, "stack.yaml", m::LoadContext{}); }
}  // namespace

TEST_CASE("redist spec: NVIDIA's base by default, a mirror, a directory", "[redist]") {
  auto s = Parse(Cudnn("redist: {release: 9.12.0}"));
  CHECK(s.cudnn.source == "redist");
  CHECK(s.cudnn.redist.release == "9.12.0");
  CHECK(s.cudnn.redist.components == std::vector<std::string>{"cudnn"});
  CHECK(s.cudnn.redist.base == "https://developer.download.nvidia.com/compute/cudnn/redist/");
  CHECK(Parse(Cudnn("redist: {release: 9.12.0, base: \"https://mirror.example/nv/cudnn/\"}"))
            .cudnn.redist.base == "https://mirror.example/nv/cudnn/");
  CHECK(Parse(Cudnn("redist: {release: 9.12.0, base: /srv/nvidia/cudnn}")).cudnn.redist.base ==
        "/srv/nvidia/cudnn");
  const std::string sha(64, 'a');
  auto h =
      Parse(Cudnn("redist: {release: 9.12.0, base: \"http://127.0.0.1:8080/\", json_sha256: " + sha + "}"));
  CHECK(h.cudnn.redist.json_sha256 == sha);
  CHECK(Parse(gp::test::kMinimalStack).cudnn.source == "apt");
  auto c = Parse(
      Edit("cuda: {version: 12.2.2}",
           "cuda: {version: 12.2.2, source: redist, redist: {release: 12.2.2, components: [cuda_cudart, "
           "cuda_nvcc]}}"));
  CHECK(c.cuda.redist.components == std::vector<std::string>{"cuda_cudart", "cuda_nvcc"});
  CHECK(c.cuda.redist.base == "https://developer.download.nvidia.com/compute/cuda/redist/");
}

TEST_CASE("redist spec: refused values point at themselves", "[redist]") {
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: \"http://mirror.example/\", json_sha256: " +
                         std::string(64, 'a') + "}")) ==
        "2 stack.yaml:11:93: plain http is only allowed from a loopback address");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: \"http://127.0.0.1/\"}")) ==
        "2 stack.yaml:11:93: plain http needs json_sha256 pinning the redistrib JSON");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: \"https://u:p@mirror.example/\"}")) ==
        "2 stack.yaml:11:93: the URL must not carry user info");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: \"ftp://mirror.example/\"}")) ==
        "2 stack.yaml:11:93: base must be an https:// URL or an absolute directory");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: \"https://mirror.example/a b\"}")) ==
        "2 stack.yaml:11:93: the URL holds characters other than letters, digits and ._+-/:[]~%");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: srv/nvidia}")) ==
        "2 stack.yaml:11:93: base must be an https:// URL or an absolute directory");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, base: /srv/../etc}")) ==
        "2 stack.yaml:11:93: the directory must not climb with \"..\"");
  CHECK(StackError(Cudnn("redist: {release: \"9.12.0/../x\"}")) ==
        "2 stack.yaml:11:79: release must be a dotted version such as 9.12.0 (the redistrib_<release>.json "
        "name)");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, components: [\"../x\"]}")) ==
        "2 stack.yaml:11:100: component \"../x\" must be a redistrib key such as cuda_cudart");
  CHECK(StackError(Cudnn("redist: {release: 9.12.0, json_sha256: abc}")) ==
        "2 stack.yaml:11:100: json_sha256 must be 64 lower-case hex digits");
  CHECK(StackError(Edit(kLine, "cudnn: {version: 9.12.0.46, cuda_major: 12, source: redist}")) ==
        "2 stack.yaml:11:45: source: redist needs a redist: section (release, base)");
  CHECK(StackError(Edit(kLine, "cudnn: {version: 9.12.0.46, cuda_major: 12, source: tarball}")) ==
        "2 stack.yaml:11:53: unknown source \"tarball\" (expected one of: apt, redist)");
  CHECK(StackError(Edit(kLine, "cudnn: {version: 9.12.0.46, cuda_major: 12, redist: {release: 9.12.0}}")) ==
        "2 stack.yaml:11:45: redist: is only read with source: redist");
  CHECK(StackError(Edit("nccl: {version: 2.18.5, cuda_major: 12}",
                        "nccl: {version: 2.18.5, cuda_major: 12, source: redist}")) ==
        "2 stack.yaml:12:49: nccl has no NVIDIA redistrib JSON: source must be apt");
  CHECK(StackError(Edit("cuda: {version: 12.2.2}",
                        "cuda: {version: 12.2.2, source: redist, redist: {release: 12.2.2}}")) ==
        "2 stack.yaml:10:49: cuda.redist: missing required key \"components\"");
}

TEST_CASE("redist spec: base URLs are read as libcurl reads them", "[redist]") {
  const std::string sha(64, 'a');
  for (const char* base : {"http://127.0.0.1:80%40evil.example/", "https://evil.example:99999/"}) {
    INFO(base);
    const std::string e = StackError(
        Cudnn(std::string("redist: {release: 9.12.0, base: \"") + base + "\", json_sha256: " + sha + "}"));
    CHECK(e.rfind("2 stack.yaml:11:93: ", 0) == 0);
  }
}
