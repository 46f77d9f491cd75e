// Team profile documents (kind: Profile), read as strictly as stacks: the same YAML front end (no
// duplicate keys, anchors or tags; UTF-8 without control characters; size and depth limits) and typed
// fields. launch/profile.h turns the result into launch's own Profile.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gp::manifest {

struct ProfileMount {
  std::string source;  // absolute, normalised, no ':' or ','
  std::string target;  // the same
  bool read_only = false;
};

struct ProfileDoc {
  std::string name;  // [A-Za-z0-9][A-Za-z0-9._+~-]*
  std::string description;
  std::string image;                    // "" or an image reference (util/image_ref.h)
  std::string ipc;                      // "" | host | private
  std::string shm;                      // "" | auto | SIZE
  std::optional<uint64_t> shm_per_gpu;  // bytes
  bool dataloader_heavy = false;
  std::string workdir;  // "" or an absolute path (util/image_ref.h ValidContainerWorkdir)
  std::vector<ProfileMount> mounts;
  std::vector<std::pair<std::string, std::string>> env;  // NAME [A-Za-z_][A-Za-z0-9_]*, one-line value
  std::vector<std::string> ports;                        // docker -p: [IP:][HOST:]CONTAINER[/tcp|udp|sctp]
};

// Throws gp::FileError "PATH:LINE:COL: message" at the offending value.
ProfileDoc ParseProfileDoc(const std::string& text, const std::string& display_path);

// docker's -p grammar as gpuprep accepts it: [IPv4:|[IPv6]:][PORT[-PORT]:]PORT[-PORT][/tcp|/udp|/sctp],
// every port 1..65535.
bool ValidPortPublish(const std::string& value);

}  // namespace gp::manifest
