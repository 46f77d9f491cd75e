// The one image-reference grammar's extra checks: a mirror, a container's working directory and the reason a
// reference is refused. The grammar itself is tested in tests/docker/image_ref_test.cc and against Docker's
// own parser by the differential tests.
#include "util/image_ref.h"

#include <catch2/catch.hpp>

#include "util/error.h"

using gp::ParseImageRef;

TEST_CASE("ParseImageRef says which part is wrong", "[util][image_ref]") {
  auto why = [](const std::string& text) {
    std::string w;
    CHECK_FALSE(ParseImageRef(text, &w));
    return w;
  };
  CHECK(why("") == "it is empty");
  CHECK(why("nvcr.io/x:1$(id)") == "the tag \"1$(id)\" is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  CHECK(why("nvcr.io/x@sha256:zz") == "the digest \"sha256:zz\" is not sha256: and 64 lower-case hex digits");
  CHECK(why("a.b:1:2/x:1") == "the registry \"a.b:1:2\" is not HOST[:PORT]");
  CHECK(why("nvcr.io/X") ==
        "the path component \"X\" is not lower-case letters and digits joined by '.', '_', '__' or '-'");
  CHECK(why(std::string(64, 'a')) == "64 hex digits alone name an image id, not an image");
  CHECK(why(std::string(248, 'x')) == "its path is longer than 255 bytes");
  CHECK(why(std::string(1025, 'x')) == "it is longer than 1024 bytes");
  std::string untouched = "kept";
  CHECK(ParseImageRef("nvcr.io/nvidia/pytorch:24.05-py3", &untouched));
  CHECK(untouched == "kept");
}

TEST_CASE("ValidImageMirror: a registry host, a port and path components, nothing else",
          "[util][image_ref]") {
  for (const char* ok : {"mirror.local", "mirror.local:5000", "mirror.local:5000/nvcr", "mirror.local/a/b/",
                         "localhost/x", "[::1]:5000/team", "10.0.0.1:5000"}) {
    INFO(ok);
    CHECK(gp::ValidImageMirror(ok));
  }
  for (const char* bad : {"", "/", "mirror .local", "mirror.local/x:1", "mirror.local@sha256:aa", "docker.io",
                          "index.docker.io/team", "team", "mirror.local:port", "mirror.local/UPPER",
                          "mirror.local//x", "-mirror.local", "mirror.local/$(id)"}) {
    INFO(bad);
    CHECK_FALSE(gp::ValidImageMirror(bad));
  }
}

TEST_CASE("PullReference refuses what the mirror check refuses", "[util][image_ref]") {
  const std::string digest = "sha256:" + std::string(64, 'a');
  auto ref = *ParseImageRef("nvcr.io/nvidia/pytorch:24.05-py3");
  CHECK(gp::PullReference(ref, digest, "mirror.local:5000/nvcr/") ==
        "mirror.local:5000/nvcr/nvidia/pytorch@" + digest);
  CHECK_THROWS_AS(gp::PullReference(ref, digest, "mirror .local"), gp::Error);
  CHECK_THROWS_AS(gp::PullReference(ref, digest, "mirror.local/" + std::string(250, 'p')), gp::Error);
}

TEST_CASE("ValidContainerWorkdir: absolute, one line", "[util][image_ref]") {
  for (const char* ok : {"/", "/workspace", "/work space", "/données"}) CHECK(gp::ValidContainerWorkdir(ok));
  for (const char* bad : {"", "work", "-w", "./w", "~/w", "/a\nb", "/a\x1b[2J", "/\xff"}) {
    INFO(bad);
    CHECK_FALSE(gp::ValidContainerWorkdir(bad));
  }
}
