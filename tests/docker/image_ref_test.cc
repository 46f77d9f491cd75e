// Image references (Docker's grammar, docker.io implied), pull references pinned by digest and rewritten
// onto a mirror, and the CUDA version an image declares.
#include "docker/image_ref.h"

#include <catch2/catch.hpp>

#include "util/error.h"

using namespace gp;
using docker::ParseImageRef;

TEST_CASE("ParseImageRef: domains, docker.io defaults, tags and digests", "[docker][image_ref]") {
  auto r = ParseImageRef("nvcr.io/nvidia/pytorch:23.10-py3");
  REQUIRE(r);
  CHECK(r->domain == "nvcr.io");
  CHECK(r->path == "nvidia/pytorch");
  CHECK(r->tag == "23.10-py3");
  CHECK(r->str() == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(ParseImageRef("ubuntu")->str() == "docker.io/library/ubuntu");
  CHECK(ParseImageRef("nvidia/cuda:12.2.2-base-ubuntu22.04")->str() ==
        "docker.io/nvidia/cuda:12.2.2-base-ubuntu22.04");
  auto port = ParseImageRef("mirror.local:5000/nvidia/pytorch@sha256:" + std::string(64, 'b'));
  REQUIRE(port);
  CHECK(port->domain == "mirror.local:5000");
  CHECK(port->tag.empty());
  CHECK(port->digest == "sha256:" + std::string(64, 'b'));
  CHECK(ParseImageRef("localhost/x:1")->domain == "localhost");
  for (const char* bad : {"", "-x", "Nvidia/pytorch", "nvcr.io/nvidia/pytorch:", "a@sha256:12", "a:b c",
                          "a//b", "nvcr.io/nvidia/pytorch:-x"})
    CHECK_FALSE(ParseImageRef(bad));
}

TEST_CASE("ParseImageRef follows Docker's reference grammar and normalisation", "[docker][image_ref]") {
  CHECK(ParseImageRef("index.docker.io/debian")->str() == "docker.io/library/debian");
  CHECK(ParseImageRef("index.docker.io/nvidia/cuda:12.2.2-base")->str() ==
        "docker.io/nvidia/cuda:12.2.2-base");
  CHECK(ParseImageRef("docker.io/library/ubuntu:24.04")->Familiar() == "ubuntu:24.04");
  CHECK(ParseImageRef("nvidia/cuda:12.2.2-base")->Familiar() == "nvidia/cuda:12.2.2-base");
  CHECK(ParseImageRef("nvcr.io/nvidia/pytorch:24.05-py3")->Familiar() == "nvcr.io/nvidia/pytorch:24.05-py3");
  CHECK(ParseImageRef("library/a/b")->Familiar() == "library/a/b");
  CHECK(ParseImageRef("[::1]:5000/x")->domain == "[::1]:5000");
  CHECK(ParseImageRef("a--b.example:5000/a__b/c---d/e.f")->path == "a__b/c---d/e.f");
  // Hosts and path components Docker refuses; 64 hex digits (an image id); sha256 only.
  for (const char* bad :
       {"test.com:http/foo", "a.com:5000:6000/x", "dock..er/docker", "a.com./x", "ab-.com", "a___b", "a-.b",
        "a_.b", "a._b", "-a.com/x", "a.com:/x", "[]/x", "[::g]/x", "[::1]x/y", "a_b.com/x", "a@sha512:abc"})
    CHECK_FALSE(ParseImageRef(bad));
  CHECK_FALSE(ParseImageRef(std::string(64, 'a')));
  CHECK(ParseImageRef(std::string(64, 'a') + ":tag"));
  CHECK(ParseImageRef(std::string(63, 'a')));
  // 255 bytes of path, however long the registry (and library/ counts, as Docker counts it).
  const std::string p255 = std::string(127, 'a') + "/" + std::string(127, 'b');
  CHECK(ParseImageRef("registry.example.com:5000/" + p255));
  CHECK_FALSE(ParseImageRef("registry.example.com:5000/" + p255 + "c"));
  CHECK(ParseImageRef(std::string(247, 'x')));  // library/ + 247 = 255
  CHECK_FALSE(ParseImageRef(std::string(248, 'x')));
}

TEST_CASE("PullReference pins by digest and rewrites onto a mirror", "[docker][image_ref]") {
  const std::string d = "sha256:" + std::string(64, 'a');
  auto ref = *ParseImageRef("nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(docker::PullReference(ref, "", "") == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(docker::PullReference(ref, d, "") == "nvcr.io/nvidia/pytorch:23.10-py3@" + d);
  CHECK(docker::PullReference(ref, d, "mirror.example.com:5000/nvcr/") ==
        "mirror.example.com:5000/nvcr/nvidia/pytorch@" + d);
  CHECK_THROWS_WITH(docker::PullReference(ref, "", "mirror.example.com"),
                    "image mirror \"mirror.example.com\": the stack pins no image.digest for "
                    "nvcr.io/nvidia/pytorch:23.10-py3; a mirror is used only for an image pinned by digest");
  auto pinned = *ParseImageRef("nvcr.io/nvidia/pytorch@sha256:" + std::string(64, 'b'));
  CHECK_THROWS_AS(docker::PullReference(pinned, d, ""), Error);
  CHECK_THROWS_AS(docker::PullReference(ref, d, "not a mirror"), Error);
}

TEST_CASE("CUDA_VERSION is normalised to three parts", "[docker][image_ref]") {
  CHECK(docker::NormalizeCudaVersion("12.2.2.009") == "12.2.2");
  CHECK(docker::NormalizeCudaVersion("13.1.0.036") == "13.1.0");
  CHECK(docker::NormalizeCudaVersion("12.4.1") == "12.4.1");
  CHECK(docker::NormalizeCudaVersion("13.0") == "13.0");
  CHECK_FALSE(docker::NormalizeCudaVersion("cuda>=9.0"));
  auto e = docker::CudaFromEnv({"NVIDIA_REQUIRE_CUDA=cuda>=9.0", "CUDA_VERSION=12.2.2.009"});
  CHECK(e.cuda == "12.2.2");
  CHECK(e.driver.empty());
  CHECK(docker::CudaFromEnv({"PATH=/bin"}).cuda.empty());
}
