// Every loader error message, word for word (docs/cli.md, "Errors"): PATH:LINE:COL: message, exit code 2.
#include <catch2/catch.hpp>

#include "manifest/helpers.h"
#include "manifest/loader.h"

using gp::test::Edit;
using gp::test::ErrorOf;
using gp::test::kMinimalStack;
namespace m = gp::manifest;

namespace {
std::string StackError(const std::string& text) {
  return ErrorOf([&] { m::ParseStack(text, "stack.yaml", m::LoadContext{}); });
}
}  // namespace

TEST_CASE("minimal stack parses", "[manifest]") {
  m::Stack s = m::ParseStack(kMinimalStack, "stack.yaml", m::LoadContext{});
  CHECK(s.name == "t");
  CHECK(s.driver.branch == 535);
  CHECK(s.driver.version.version->str() == "535.129.03");
  CHECK(s.image.cuda.unknown);
  CHECK(s.image.cuda.reason == "not in the facts");
  CHECK(s.origins.at("driver.version") == "stack.yaml:9:12");
  CHECK(s.origins.at("cudnn.cuda_major") == "stack.yaml:11:40");
}

TEST_CASE("unknown keys are errors with did-you-mean", "[manifest]") {
  CHECK(StackError(Edit("driver:", "drivr:")) ==
        "2 stack.yaml:7:1: unknown key \"drivr\" (did you mean \"driver\"?)");
  CHECK(StackError(Edit("  branch: 535", "  brnch: 535")) ==
        "2 stack.yaml:8:3: unknown key \"brnch\" (did you mean \"branch\"?)");
  CHECK(
      StackError(std::string(kMinimalStack) + "workload: {qqq: 1}\n") ==
      "2 stack.yaml:15:12: unknown key \"qqq\" (expected one of: profile, min_cpus_per_gpu, min_ram_per_gpu, "
      "min_shm_per_gpu, task, nodes)");
}

TEST_CASE("wrong types name what was expected and what was found", "[manifest]") {
  CHECK(StackError(Edit("architectures: [hopper]", "architectures: hopper")) ==
        "2 stack.yaml:6:16: expected a list, got \"hopper\"");
  CHECK(StackError(Edit("os: [{id: ubuntu, version_id: \"22.04\"}]", "os: {id: ubuntu}")) ==
        "2 stack.yaml:5:5: expected a list, got a map");
  CHECK(StackError(Edit("  name: t", "  name: [t]")) == "2 stack.yaml:4:9: expected a string, got a list");
  CHECK(StackError(Edit("branch: 535", "branch: abc")) ==
        "2 stack.yaml:8:11: expected a whole number, got \"abc\"");
  CHECK(StackError(Edit("cuda: {version: 12.2.2}", "cuda: {version: 12.2.2, optional: maybe}")) ==
        "2 stack.yaml:10:35: expected true or false, got \"maybe\"");
  CHECK(StackError(Edit("driver:\n  branch: 535\n  version: 535.129.03\n", "driver: 535\n")) ==
        "2 stack.yaml:7:9: expected a map, got \"535\"");
}

TEST_CASE("bad version strings", "[manifest]") {
  CHECK(StackError(Edit("version: 535.129.03", "version: 535.x")) ==
        "2 stack.yaml:9:12: \"535.x\" is not a version");
  CHECK(StackError(Edit("version: 12.2.2", "version: v12")) ==
        "2 stack.yaml:10:17: \"v12\" is not a version");
  CHECK(StackError(Edit("version: 535.129.03", "version: 550.54.14")) ==
        "2 stack.yaml:9:12: driver version 550.54.14 is not on branch 535");
}

TEST_CASE("missing required fields", "[manifest]") {
  CHECK(StackError(Edit("  branch: 535\n", "")) ==
        "2 stack.yaml:8:3: driver: missing required key \"branch\"");
  std::string no_image = kMinimalStack;
  no_image = no_image.substr(0, no_image.find("image:"));
  CHECK(StackError(no_image) == "2 stack.yaml:1:1: missing required key \"image\"");
  CHECK(StackError(Edit("cuda: unknown, cuda_unknown_reason: \"not in the facts\"", "cuda: unknown")) ==
        "2 stack.yaml:14:56: cuda is unknown: add cuda_unknown_reason saying why");
  CHECK(StackError(Edit("cuda: {version: 12.2.2}", "cuda: {version: unknown}")) ==
        "2 stack.yaml:10:17: version is unknown: add unknown_reason saying why");
}

TEST_CASE("version unknown with a reason gives Pinned{unknown}", "[manifest]") {
  m::Stack s = m::ParseStack(Edit("nccl: {version: 2.18.5, cuda_major: 12}",
                                  "nccl: {version: unknown, unknown_reason: \"no source\", cuda_major: 12}"),
                             "stack.yaml", m::LoadContext{});
  CHECK(s.nccl.version.unknown);
  CHECK_FALSE(s.nccl.version.known());
  CHECK(s.nccl.version.reason == "no source");
}

TEST_CASE("header, syntax and document errors", "[manifest]") {
  CHECK(StackError(Edit("gpuprep/v1", "gpuprep/v2")) ==
        "2 stack.yaml:1:13: apiVersion must be \"gpuprep/v1\", got \"gpuprep/v2\"");
  CHECK(StackError(Edit("kind: Stack", "kind: Stak")) ==
        "2 stack.yaml:2:7: kind must be \"Stack\", got \"Stak\"");
  CHECK(StackError(Edit("  name: t", "  name: [t")) ==
        "2 stack.yaml:5:3: YAML syntax error: end of sequence flow not found");
  CHECK(StackError("") == "2 stack.yaml:1:1: empty document");
  CHECK(StackError(Edit("kind: Stack\n", "kind: Stack\nkind: Stack\n")) ==
        "2 stack.yaml:3:1: duplicate key \"kind\"");
  CHECK(StackError(Edit("  name: t", "  name: &n t")) ==
        "2 stack.yaml:4:9: YAML anchors (&name) are not supported in gpuprep manifests");
  CHECK(StackError(Edit("  name: t", "  name: !!str t")) ==
        "2 stack.yaml:4:9: YAML tags (\"tag:yaml.org,2002:str\") are not supported");
  CHECK(StackError(Edit("driver:\n  branch: 535\n  version: 535.129.03\n", "driver:\n")) ==
        "2 stack.yaml:7:1: missing required key \"driver\"");
  CHECK(StackError(Edit("kind: Stack\n", "kind: Stack\n? [a]\n: b\n")) ==
        "2 stack.yaml:3:3: a key must be a plain string");
  CHECK(StackError(Edit("architectures: [hopper]", "architectures: [hoper]")) ==
        "2 stack.yaml:6:17: unknown architecture \"hoper\" (did you mean \"hopper\"?)");
}

TEST_CASE("whole-stack rules: CUDA major of cuDNN/NCCL, toolkit advisories", "[manifest]") {
  CHECK(StackError(Edit("cudnn: {version: 8.9.7.29, cuda_major: 12}",
                        "cudnn: {version: 8.9.7.29, cuda_major: 11}")) ==
        "2 stack.yaml:11:40: cudnn is built for CUDA 11 but the stack's CUDA is 12.2.2");
  CHECK(StackError(Edit("container_toolkit: {version: 1.19.1}", "container_toolkit: {version: 1.17.3}")) ==
        "2 stack.yaml:13:30: container toolkit 1.17.3 is affected by CVE-2025-23359 (fixed in 1.17.4)");
  CHECK(StackError(Edit("container_toolkit: {version: 1.19.1}", "container_toolkit: {version: 1.16.1}")) ==
        "2 stack.yaml:13:30: container toolkit 1.16.1 is affected by CVE-2024-0132, CVE-2024-0133 (fixed in "
        "1.16.2)");
  CHECK(StackError(Edit("container_toolkit: {version: 1.19.1}", "container_toolkit: {version: 1.17.8}")) ==
        "2 stack.yaml:13:30: container toolkit 1.17.8 is affected by CVE-2026-24260 (fixed in 1.19.1)");
  CHECK(
      StackError(Edit("container_toolkit: {version: 1.19.1}", "container_toolkit: {version: 1.17.7}")) ==
      "2 stack.yaml:13:30: container toolkit 1.17.7 is affected by CVE-2025-23266, CVE-2025-23267 (fixed in "
      "1.17.8)");
  CHECK(StackError(std::string(kMinimalStack) + "notes: x\n") == "no error");
  // From CUDA 13.4 the third digit is a build number: 13.4.0 is the developer preview, not a release.
  CHECK(StackError(Edit("cuda: {version: 12.2.2}\ncudnn: {version: 8.9.7.29, cuda_major: 12}\nnccl: "
                        "{version: 2.18.5, cuda_major: 12}",
                        "cuda: {version: 13.4.0}\ncudnn: {version: 8.9.7.29, cuda_major: 13}\nnccl: "
                        "{version: 2.18.5, cuda_major: 13}")) ==
        "2 stack.yaml:10:17: CUDA 13.4.0 is the 13.4 developer preview, not a release; NVIDIA's GA of CUDA "
        "13.4 is 13.4.1");
  // A stack's end of life agrees with compat.yaml's driver_branches.
  CHECK(StackError(Edit("  version: 535.129.03\n", "  version: 535.129.03\n  end_of_life: 2027-01\n")) ==
        "2 stack.yaml:10:16: R535 reaches end of life in 2026-06 (compat.yaml driver_branches), not 2027-01");
  CHECK(StackError(Edit("  version: 535.129.03\n", "  version: 535.129.03\n  end_of_life: 2026-06\n")) ==
        "no error");
}

TEST_CASE("a stack's RAM per GPU is a decimal or binary size; shm keeps Docker's reading", "[manifest]") {
  const std::string base(kMinimalStack);
  CHECK(StackError(base + "workload: {min_ram_per_gpu: 256G}\n") ==
        "2 stack.yaml:15:29: \"256G\" is not a size (examples: 256GB, 256GiB, 0); write 256GB for 256 x 10^9 "
        "bytes "
        "or 256GiB for 256 x 2^30");
  const auto ram = [&](const std::string& v) {
    return m::ParseStack(base + "workload: {min_ram_per_gpu: " + v + "}\n", "stack.yaml", m::LoadContext{})
        .workload.min_ram_per_gpu;
  };
  CHECK(ram("256GB") == 256000000000ULL);
  CHECK(ram("256GiB") == 274877906944ULL);
  CHECK(m::ParseStack(base + "workload: {min_shm_per_gpu: 8g}\n", "stack.yaml", m::LoadContext{})
            .workload.min_shm_per_gpu == 8589934592ULL);
}
