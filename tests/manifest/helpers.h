// Shared by tests/manifest/*_test.cc: a complete minimal stack document and error capture.
#pragma once
#include <functional>
#include <string>

#include "util/error.h"

namespace gp::test {

// Line numbers matter: the error tests below point into this text.
inline const char* kMinimalStack =
    "apiVersion: gpuprep/v1\n"                      // 1
    "kind: Stack\n"                                 // 2
    "metadata:\n"                                   // 3
    "  name: t\n"                                   // 4
    "os: [{id: ubuntu, version_id: \"22.04\"}]\n"   // 5
    "architectures: [hopper]\n"                     // 6
    "driver:\n"                                     // 7
    "  branch: 535\n"                               // 8
    "  version: 535.129.03\n"                       // 9
    "cuda: {version: 12.2.2}\n"                     // 10
    "cudnn: {version: 8.9.7.29, cuda_major: 12}\n"  // 11
    "nccl: {version: 2.18.5, cuda_major: 12}\n"     // 12
    "container_toolkit: {version: 1.19.1}\n"        // 13
    "image: {ref: \"nvcr.io/nvidia/pytorch:23.10-py3\", cuda: unknown, cuda_unknown_reason: \"not in the "
    "facts\"}\n";

// kMinimalStack with the first occurrence of `from` replaced by `to`.
inline std::string Edit(const std::string& from, const std::string& to) {
  std::string s = kMinimalStack;
  auto pos = s.find(from);
  if (pos == std::string::npos) throw std::logic_error("Edit: no \"" + from + "\" in the minimal stack");
  return s.replace(pos, from.size(), to);
}

// The message of the gp::Error `fn` throws, prefixed with its exit code ("2 stack.yaml:1:1: ..."), or
// "no error".
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return std::to_string(e.code()) + " " + e.what();
  }
  return "no error";
}

}  // namespace gp::test
