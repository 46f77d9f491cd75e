// The host a launch is generated for: probed live, or read from a saved `doctor --json` snapshot. Besides
// HostFacts it keeps what the snapshot's "layers" say (status and found value per layer), which is how
// an older or minimal snapshot tells launch that docker and the container toolkit work.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "manifest/model.h"
#include "probe/host.h"

namespace gp::launch {

struct LayerVerdict {
  std::string status;  // ok | warn | fail | skip
  std::string found;   // "535.161.08", "" when null
};

struct Target {
  probe::HostFacts host;
  bool from_snapshot = false;
  std::string snapshot_path;                   // as the user gave it (--host)
  std::string manifest;                        // the snapshot's "manifest" (stack doctor used), "" if none
  std::map<std::string, LayerVerdict> layers;  // by layer name
  // "this host" (live) or "the host in node.json" (snapshot), for messages.
  std::string Describe() const;
};

// Reads a `gpuprep doctor --json` document (or a bare host object). Throws FileError on bad input.
Target TargetFromSnapshot(const std::string& text, const std::string& display_path);

// The NVIDIA driver version on the host: the kernel module's, else the user-space library's, else the
// snapshot's driver layer "found"; nullopt when there is none.
std::optional<Version> HostDriverVersion(const Target& t);

// True when `docker run --gpus` works there: an "nvidia" runtime registered (engine or daemon.json), the
// toolkit's packages installed, or (snapshots without host.docker) the docker and container_toolkit layers
// are ok.
bool HasNvidiaRuntime(const Target& t);
// True when the engine resolves CDI names for NVIDIA GPUs (host.docker.cdi).
bool HasCdi(const Target& t);

}  // namespace gp::launch
