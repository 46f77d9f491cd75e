// Team profiles (manifests/profiles/*.yaml, kind: Profile): what a team's containers need beyond the
// stack's defaults. manifest/profile.cc reads the document; errors are FileError "PATH:LINE:COL: msg".
//
//   apiVersion: gpuprep/v1
//   kind: Profile
//   metadata: {name: llm-finetune, description: "..."}
//   spec:
//     image: nvcr.io/nvidia/pytorch:24.05-py3   # optional; default: the stack's image
//     ipc: host                                 # host | private
//     shm: auto                                 # auto | SIZE ("16g")
//     shm_per_gpu: 8g                           # what `--shm auto` gives each GPU with ipc private
//     dataloader_heavy: true                    # warn when shm is small
//     workdir: /workspace
//     mounts: [{source: /data, target: /data, read_only: true}]
//     env: {NCCL_DEBUG: WARN}
//     ports: ["8888:8888"]
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch/config.h"

namespace gp::sys {
class Fs;
}

namespace gp::launch {

struct Profile {
  std::string name;
  std::string description;
  std::string source;                   // "embedded:NAME" or the path the user gave
  std::string image;                    // "" = the stack's
  std::string ipc;                      // "" = default
  std::string shm;                      // "" | "auto" | SIZE as written
  std::optional<uint64_t> shm_per_gpu;  // bytes
  bool dataloader_heavy = false;
  std::string workdir;
  std::vector<Mount> mounts;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> ports;
};

// Parses one profile document; `display_path` is what errors name. Unknown keys are errors with
// "did you mean".
Profile ParseProfile(const std::string& text, const std::string& display_path);

// NAME (an embedded profile, manifests/profiles/NAME.yaml) or PATH (contains '/' or ends in .yaml/.yml,
// read through `fs`). Throws FlagError("--profile", ...) for an unknown name or unreadable file.
Profile LoadProfile(const std::string& spec, const sys::Fs& fs);

// Names of the embedded profiles, sorted.
std::vector<std::string> EmbeddedProfileNames();

}  // namespace gp::launch
