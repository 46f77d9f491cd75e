// verify cuda checks the toolkit itself, not only libcuda: version.json at the pinned major.minor and its
// libcudart loading at that version.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apply/verify.h"
#include "layers/table.h"

using namespace gp;

namespace {
struct ToolkitHost {
  test::TempRoot root;
  manifest::Stack stack = test::TestStack();  // CUDA 12.2.2, optional
  probe::HostFacts facts = test::BareHost(2);
  test::FakeNative native = test::FakeNative::Healthy(2);
  ToolkitHost() {
    root.Write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
  }
  void Toolkit(const std::string& dir, const std::string& nvcc) {
    root.Write(dir + "/version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"" + nvcc +
                                          "\"}, \"cuda_nvcc\": {\"name\": \"CUDA NVCC\", \"version\": \"" +
                                          nvcc + "\"}}");
  }
  verdict::LayerReport Run() {
    apply::VerifyEnv env{&root.fs(), &native, &stack, &facts};
    return layers::VerifyLayer("cuda", env);
  }
};
}  // namespace

TEST_CASE("verify cuda: the toolkit at the pinned major.minor, and its libcudart", "[apply]") {
  ToolkitHost v;
  // Optional toolkit, absent: libcuda's check stands, the toolkit part is skipped and says so.
  auto r = v.Run();
  CHECK(r.status == verdict::Status::kOk);
  CHECK(r.detail.find("the CUDA toolkit is not installed (optional in this stack)") != std::string::npos);

  // Required and absent: fail.
  v.stack.cuda.optional = false;
  r = v.Run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find("the CUDA toolkit is not installed (no version.json under /usr/local/cuda-12.2 or "
                      "/usr/local/cuda)") != std::string::npos);

  // Present, but libcudart does not load from it.
  v.Toolkit("/usr/local/cuda-12.2", "12.2.140");
  r = v.Run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find("libcudart of the toolkit in /usr/local/cuda-12.2 could not be loaded") !=
        std::string::npos);
  CHECK(v.native.cudart_dirs ==
        std::vector<std::string>{"/usr/local/cuda-12.2/lib64", "/usr/local/cuda-12.2/lib"});

  // libcudart from another release.
  v.native.cudart = {true, "/usr/local/cuda-12.2/lib64/libcudart.so.12", 12040, ""};
  r = v.Run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find(
            "libcudart 12.4 loaded from /usr/local/cuda-12.2/lib64/libcudart.so.12 but the stack pins "
            "12.2.2") != std::string::npos);

  // All agree.
  v.native.cudart.value = 12020;
  r = v.Run();
  CHECK(r.status == verdict::Status::kOk);
  CHECK(r.detail.find("CUDA toolkit 12.2.140 in /usr/local/cuda-12.2; libcudart 12.2 loads") !=
        std::string::npos);

  // A toolkit of another release under /usr/local/cuda.
  ToolkitHost w;
  w.stack.cuda.optional = false;
  w.Toolkit("/usr/local/cuda", "12.4.131");
  r = w.Run();
  CHECK(r.status == verdict::Status::kFail);
  CHECK(r.detail.find("the CUDA toolkit in /usr/local/cuda is 12.4.131 but the stack pins 12.2.2") !=
        std::string::npos);
}
