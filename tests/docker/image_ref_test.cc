// Image references (Docker's grammar, docker.io implied), pull references pinned by digest and rewritten
// onto a mirror, and the CUDA version an image declares.
#include <catch2/catch.hpp>

#include "docker/image_ref.h"
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
  CHECK(ParseImageRef("nvidia/cuda:12.2.2-base-ubuntu22.04")->str() == "docker.io/nvidia/cuda:12.2.2-base-ubuntu22.04");
  auto port = ParseImageRef("mirror.local:5000/nvidia/pytorch@sha256:" + std::string(64, 'b'));
  REQUIRE(port);
  CHECK(port->domain == "mirror.local:5000");
  CHECK(port->tag.empty());
  CHECK(port->digest == "sha256:" + std::string(64, 'b'));
  CHECK(ParseImageRef("localhost/x:1")->domain == "localhost");
  for (const char* bad : {"", "-x", "Nvidia/pytorch", "nvcr.io/nvidia/pytorch:", "a@sha256:12", "a:b c", "a//b",
                          "nvcr.io/nvidia/pytorch:-x"})
    CHECK_FALSE(ParseImageRef(bad));
}

TEST_CASE("PullReference pins by digest and rewrites onto a mirror", "[docker][image_ref]") {
  const std::string d = "sha256:" + std::string(64, 'a');
  auto ref = *ParseImageRef("nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(docker::PullReference(ref, "", "") == "nvcr.io/nvidia/pytorch:23.10-py3");
  CHECK(docker::PullReference(ref, d, "") == "nvcr.io/nvidia/pytorch:23.10-py3@" + d);
  CHECK(docker::PullReference(ref, d, "mirror.example.com:5000/nvcr/") == "mirror.example.com:5000/nvcr/nvidia/pytorch@" + d);
  CHECK_THROWS_WITH(docker::PullReference(ref, "", "mirror.example.com"),
                    "image mirror mirror.example.com: the stack pins no image.digest for "
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
