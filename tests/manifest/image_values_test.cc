// An image reference, digest, mirror or working directory is checked once, where the file is read: `manifest
// validate`, `plan` and `launch` give the same one-line PATH:LINE:COL error and exit 2 for the same file.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "apply/harness.h"
#include "support/cli.h"
#include "support/launch_support.h"

namespace {

using gp::test::CliRun;
using gp::test::Gpuprep;

const std::string kDigest = "sha256:" + std::string(64, 'a');

std::string Write(const gp::test::TempRoot& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path, std::ios::trunc | std::ios::binary) << text;
  return path;
}

// A stack that takes everything from a shipped one but its image section.
std::string StackWithImage(const gp::test::TempRoot& dir, const std::string& image) {
  return Write(dir, "stack.yaml",
               "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\nmetadata:\n"
               "  name: image-values\nimage:\n" +
                   image);
}

std::string ProfileWithSpec(const gp::test::TempRoot& dir, const std::string& spec) {
  return Write(dir, "profile.yaml",
               "apiVersion: gpuprep/v1\nkind: Profile\nmetadata:\n  name: team\nspec:\n" + spec);
}

// Requires exit 2, nothing on stdout and one line on stderr; returns that line.
std::string Refused(const std::vector<std::string>& args) {
  CliRun r = Gpuprep(args);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  return r.err;
}

struct StackCase {
  std::string image;  // the stack's image section
  std::string where;  // LINE:COL of the offending value
  std::string message;
};

}  // namespace

TEST_CASE("image values: a stack's image is refused alike by manifest validate, plan and launch",
          "[manifest][launch][plan]") {
  const std::string root = std::string(GP_FIXTURES) + "/hosts/bare-nouveau";
  const std::vector<StackCase> cases = {
      {"  ref: \"nvcr.io/x:1$(id)\"\n", "7:8",
       "image ref \"nvcr.io/x:1$(id)\" is not an image reference: the tag \"1$(id)\" is not "
       "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"},
      {"  ref: \"nvcr.io/x@sha256:zz\"\n", "7:8",
       "image ref \"nvcr.io/x@sha256:zz\" is not an image reference: the digest \"sha256:zz\" is not sha256: "
       "and "
       "64 lower-case hex digits"},
      {"  ref: \"a.b:1:2/x:1\"\n", "7:8",
       "image ref \"a.b:1:2/x:1\" is not an image reference: the registry \"a.b:1:2\" is not HOST[:PORT]"},
      {"  ref: nvcr.io/nvidia/pytorch:23.10-py3\n  digest: " + kDigest + "\n  mirror: \"mirror .local\"\n",
       "9:11", "image mirror \"mirror .local\" is not HOST[:PORT][/PREFIX] (a registry, no tag)"},
      {"  ref: nvcr.io/nvidia/pytorch:23.10-py3\n  digest: \"sha256:" + std::string(64, 'z') + "\"\n", "8:11",
       "digest \"sha256:zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"... is not \"sha256:\" and 64 lower-case hex "
       "digits"},
  };
  for (const StackCase& c : cases) {
    INFO(c.image);
    gp::test::TempRoot dir;
    const std::string path = StackWithImage(dir, c.image);
    const std::string want = "gpuprep: error: " + path + ":" + c.where + ": " + c.message + "\n";
    CHECK(Refused({"manifest", "validate", path}) == want);
    CHECK(Refused({"--root", root, "--manifest", path, "plan"}) == want);
    CHECK(Refused({"--root", root, "--manifest", path, "plan", "--format", "sh"}) == want);
    CHECK(Refused({"--manifest", path, "launch", "--host", gp::test::kH100x2}) == want);
  }
}

TEST_CASE("image values: a profile's image and workdir are refused alike by manifest validate and launch",
          "[manifest][launch]") {
  const std::vector<StackCase> cases = {
      {"  image: \"nvcr.io/x:1 --privileged\"\n", "6:10",
       "spec.image: \"nvcr.io/x:1 --privileged\" is not an image reference: the tag \"1 --privileged\" is "
       "not "
       "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"},
      {"  image: \"--privileged\"\n", "6:10",
       "spec.image: \"--privileged\" is not an image reference: the path component \"--privileged\" is not "
       "lower-case letters and digits joined by '.', '_', '__' or '-'"},
      {"  workdir: work\n", "6:12",
       "spec.workdir: must be an absolute path inside the container, got \"work\""},
      {"  workdir: \"-w\"\n", "6:12",
       "spec.workdir: must be an absolute path inside the container, got \"-w\""},
  };
  for (const StackCase& c : cases) {
    INFO(c.image);
    gp::test::TempRoot dir;
    const std::string path = ProfileWithSpec(dir, c.image);
    const std::string want = "gpuprep: error: " + path + ":" + c.where + ": " + c.message + "\n";
    CHECK(Refused({"manifest", "validate", path}) == want);
    CHECK(Refused({"launch", "--host", gp::test::kH100x2, "--profile", path}) == want);
    // --image on the command line replaces the profile's image, but the profile itself is still refused.
    CHECK(Refused({"launch", "--host", gp::test::kH100x2, "--profile", path, "--image", gp::test::kImage}) ==
          want);
  }
}

TEST_CASE("image values: launch flags go through the same checks", "[launch]") {
  const std::string host = gp::test::kH100x2;
  for (const std::string& bad :
       std::vector<std::string>{"nvcr.io/x:1$(id)", "nvcr.io/x@sha256:zz", "a.b:1:2/x:1",
                                "nvcr.io/x:1 --privileged", "nvcr.io/x@sha512:" + std::string(128, 'a')}) {
    INFO(bad);
    CHECK(Refused({"launch", "--host", host, "--image", bad}) ==
          "gpuprep: error: --image: \"" + bad + "\" is not an image reference\n");
  }
  CHECK(Refused({"launch", "--host", host, "--image", gp::test::kImage, "--workdir", "work"}) ==
        "gpuprep: error: --workdir: must be an absolute path inside the container, got \"work\"\n");
}

TEST_CASE("image values: good references, mirrors and workdirs still load", "[manifest][launch]") {
  gp::test::TempRoot dir;
  for (const std::string& image : std::vector<std::string>{
           "  ref: nvcr.io/nvidia/pytorch:23.10-py3\n  digest: " + kDigest +
               "\n  mirror: registry.example:5000/nvcr/\n",
           "  ref: \"nvcr.io/nvidia/pytorch:23.10-py3@" + kDigest + "\"\n  digest: " + kDigest + "\n",
           "  ref: \"[::1]:5000/team/train:v1\"\n", "  ref: localhost/x\n"}) {
    INFO(image);
    const std::string path = StackWithImage(dir, image);
    CliRun r = Gpuprep({"manifest", "validate", path});
    CHECK(r.err.empty());
    CHECK(r.code == 0);
  }
  const std::string profile = ProfileWithSpec(dir, "  image: ubuntu:24.04\n  workdir: /work space\n");
  CliRun r = Gpuprep({"manifest", "validate", profile});
  CHECK(r.err.empty());
  CHECK(r.code == 0);
  r = Gpuprep({"launch", "--host", gp::test::kH100x2, "--profile", profile, "--format", "json"});
  CHECK(r.code == 0);  // stderr warns that ubuntu's CUDA is unknown
  CHECK(r.out.find("\"/work space\"") != std::string::npos);
}

TEST_CASE("image values: a stack's ref and digest must agree", "[manifest]") {
  gp::test::TempRoot dir;
  const std::string path = StackWithImage(dir, "  ref: \"nvcr.io/nvidia/pytorch:23.10-py3@" + kDigest +
                                                   "\"\n  digest: sha256:" + std::string(64, 'b') + "\n");
  CHECK(Refused({"manifest", "validate", path}) ==
        "gpuprep: error: " + path +
            ":8:11: digest \"sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"... is not the digest image ref "
            "names\n");
}
