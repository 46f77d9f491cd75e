// Verify after a library switch, in a new gpuprep process. A process keeps the copy of a library it loaded:
// the host probe at apply's start dlopens libcudnn.so.9 (and libcudart, libnccl), and cuDNN 9's libcudnn.so.9
// loads its sub-libraries by bare soname, so after `current` (or dpkg) switched the files only a fresh
// process loads the new version cleanly. apply therefore verifies cuda, cudnn and nccl by running
// `gpuprep [--manifest M] -q --json verify --only LAYER` and reading its answer.
#pragma once
#include <string>
#include <vector>

#include "sys/process.h"

namespace gp::apply {

// cuda, cudnn and nccl: the layers whose verify loads libraries the probe may already have loaded.
bool VerifiesInFreshProcess(const std::string& layer);

// SELF [--manifest MANIFEST] -q --json verify --only LAYER ("" manifest: the default choice, as this run).
std::vector<std::string> FreshVerifyArgv(const std::string& self, const std::string& manifest,
                                         const std::string& layer);

struct FreshVerify {
  bool ok = false;
  std::string detail;  // the layer's detail (and "(fix: ...)" when it failed), or why the answer is missing
};

// Runs `argv` (FreshVerifyArgv) and reads the layer's verdict from its JSON (docs/json.md, verify).
FreshVerify VerifyInFreshProcess(sys::CommandRunner& runner, const std::vector<std::string>& argv);

}  // namespace gp::apply
