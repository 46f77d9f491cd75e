// redistrib JSON parsing (redist/redistrib.h) on NVIDIA's two layouts: cuDNN 9's per-CUDA level and the
// flat CUDA one, and the errors for an index that would make gpuprep fetch something else.
#include "redist/redistrib.h"

#include <catch2/catch.hpp>

#include "redist/error.h"

using gp::redist::FindArchive;

namespace {
// The shape of https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.8.0.json (values
// shortened where they do not matter here).
const char* kCudnn = R"J({
  "release_date": "2025-03-04", "release_label": "9.8.0", "release_product": "cudnn",
  "cudnn": {
    "name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt",
    "version": "9.8.0.87",
    "linux-x86_64": {
      "cuda11": {"relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.8.0.87_cuda11-archive.tar.xz",
                 "sha256": "cf4dfaef8311d987d640a322f668cd5240ac3e5302abe9617dd991b5b2532758",
                 "md5": "f8cc1eb607dd83dbaa12f9ba80934cbb", "size": "561520128"},
      "cuda12": {"relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.8.0.87_cuda12-archive.tar.xz",
                 "sha256": "321b9b33bb1287404d93d5672d352f16feabc4b220ac6ae0b86e4b27f257dcf4",
                 "md5": "3674444654eb59b6f4c919103a8531af", "size": "923946888"}
    },
    "cuda_variant": ["11", "12"]
  }
})J";
// The shape of https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.2.2.json.
const char* kCuda = R"J({
  "release_date": "2023-08-29", "release_label": "12.2.2", "release_product": "cuda",
  "cuda_cudart": {
    "name": "CUDA Runtime (cudart)", "license": "CUDA Toolkit", "license_path": "cuda_cudart/LICENSE.txt",
    "version": "12.2.140",
    "linux-x86_64": {
      "relative_path": "cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.2.140-archive.tar.xz",
      "sha256": "baebd331249bca0edf36776ead90e6b2024ffee01ea26cd9dd07344bebeaff08",
      "md5": "030e85f4d0305c2924e2b76e84e2da32", "size": "1058992"
    }
  }
})J";

std::string RedistribError(const std::string& json, const std::string& comp, const std::string& platform,
                           std::optional<int> major) {
  try {
    FindArchive(json, comp, platform, major);
  } catch (const gp::redist::RedistError& e) {
    return e.what();
  }
  return "no error";
}

std::string With(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}
}  // namespace

TEST_CASE("redistrib: cuDNN 9's per-CUDA-major archives", "[redist]") {
  auto a = FindArchive(kCudnn, "cudnn", "linux-x86_64", 12);
  CHECK(a.version == "9.8.0.87");
  CHECK(a.release_label == "9.8.0");
  CHECK(a.relative_path == "cudnn/linux-x86_64/cudnn-linux-x86_64-9.8.0.87_cuda12-archive.tar.xz");
  CHECK(a.sha256 == "321b9b33bb1287404d93d5672d352f16feabc4b220ac6ae0b86e4b27f257dcf4");
  CHECK(a.size == 923946888u);
  CHECK(a.top_dir == "cudnn-linux-x86_64-9.8.0.87_cuda12-archive");
  CHECK(FindArchive(kCudnn, "cudnn", "linux-x86_64", 11).size == 561520128u);
}

TEST_CASE("redistrib: CUDA's flat platform entries", "[redist]") {
  auto a = FindArchive(kCuda, "cuda_cudart", "linux-x86_64", std::nullopt);
  CHECK(a.version == "12.2.140");
  CHECK(a.release_label == "12.2.2");
  CHECK(a.top_dir == "cuda_cudart-linux-x86_64-12.2.140-archive");
  CHECK(a.size == 1058992u);
}

TEST_CASE("redistrib: what is missing or hostile is named", "[redist]") {
  CHECK(RedistribError("not json", "cudnn", "linux-x86_64", 12) == "not a redistrib JSON object");
  CHECK(RedistribError(kCudnn, "cudnn_samples", "linux-x86_64", 12) == "redistrib: no \"cudnn_samples\"");
  CHECK(RedistribError(kCudnn, "cudnn", "linux-sbsa", 12) == "cudnn: no \"linux-sbsa\"");
  CHECK(RedistribError(kCudnn, "cudnn", "linux-x86_64", 13) == "cudnn.linux-x86_64: no \"cuda13\"");
  CHECK(RedistribError(kCudnn, "cudnn", "linux-x86_64", std::nullopt) ==
        "cudnn.linux-x86_64: has per-CUDA archives; the stack must say cuda_major");
  const std::string rel = "cudnn/linux-x86_64/cudnn-linux-x86_64-9.8.0.87_cuda12-archive.tar.xz";
  for (const std::string& bad : {std::string("/etc/passwd.tar.xz"), std::string("../../x.tar.xz"),
                                 std::string("cudnn/a b.tar.xz"), std::string("cudnn/x.zip")}) {
    CHECK(RedistribError(With(kCudnn, rel, bad), "cudnn", "linux-x86_64", 12) ==
          "cudnn.linux-x86_64.cuda12.relative_path: \"" + bad +
              "\" is not a relative .tar.xz path inside the redistributable tree");
  }
  CHECK(RedistribError(With(kCudnn, "321b9b33", "321B9B33"), "cudnn", "linux-x86_64", 12) ==
        "cudnn.linux-x86_64.cuda12.sha256: not 64 lower-case hex digits");
  CHECK(RedistribError(With(kCudnn, "\"923946888\"", "923946888"), "cudnn", "linux-x86_64", 12) ==
        "cudnn.linux-x86_64.cuda12.size: not a string");
  CHECK(RedistribError(With(kCudnn, "\"923946888\"", "\"-1\""), "cudnn", "linux-x86_64", 12) ==
        "cudnn.linux-x86_64.cuda12.size: not a decimal byte count");
}

TEST_CASE("redistrib: platforms and version matching", "[redist]") {
  CHECK(gp::redist::PlatformFor("x86_64") == "linux-x86_64");
  CHECK(gp::redist::PlatformFor("aarch64") == "linux-sbsa");
  CHECK(gp::redist::PlatformFor("ppc64le") == "linux-ppc64le");
  CHECK(gp::redist::PlatformFor("riscv64") == "");
  CHECK(gp::redist::VersionMatches("9.8.0.87", "9.8.0"));
  CHECK(gp::redist::VersionMatches("9.8.0.87", "9.8.0.87"));
  CHECK_FALSE(gp::redist::VersionMatches("9.8.01", "9.8.0"));
  CHECK_FALSE(gp::redist::VersionMatches("9.8.0", "9.8.0.87"));
}

TEST_CASE("redistrib: a component's own version is checked, never the file's release_label", "[redist]") {
  using gp::redist::VersionProblem;
  auto cudnn = FindArchive(kCudnn, "cudnn", "linux-x86_64", 12);  // 9.8.0.87 in release 9.8.0
  CHECK(VersionProblem(cudnn, "cudnn", "9.8.0").empty());
  CHECK(VersionProblem(cudnn, "cudnn", "9.8.0.87").empty());
  auto old = cudnn;
  old.version = "8.0.0.1";  // an older component under the label asked for
  CHECK(VersionProblem(old, "cudnn", "9.8.0") == "cudnn is 8.0.0.1, the stack pins 9.8.0");
  // CUDA: the stack pins the toolkit release; the runtime and the compiler carry its major.minor
  // (redistrib_12.2.2.json: cuda_cudart 12.2.140), the libraries their own numbering.
  auto cudart = FindArchive(kCuda, "cuda_cudart", "linux-x86_64", std::nullopt);
  CHECK(VersionProblem(cudart, "cuda", "12.2.2").empty());
  auto stale = cudart;
  stale.version = "11.8.89";
  CHECK(VersionProblem(stale, "cuda", "12.2.2") == "cuda_cudart is 11.8.89, the stack pins CUDA 12.2.2");
  auto other = cudart;
  other.release_label = "12.1.1";  // a file of another release
  CHECK(VersionProblem(other, "cuda", "12.2.2") ==
        "the redistrib JSON is release 12.1.1, the stack pins 12.2.2");
}
