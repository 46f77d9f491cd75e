// What one redistributable install is asked to do: built by the planner from a stack's `source: redist`
// section (plan/), carried in the plan's kRedist action, executed by redist/install.h.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"

namespace gp::redist {

struct Request {
  std::string layer;                    // "cudnn" | "cuda"
  std::string json_url;                 // ".../redistrib_9.12.0.json" (https://, loopback http://, file://)
  std::string json_sha256;              // the stack's pin of that JSON ("" = none; required for plain http)
  std::string archive_base;             // URL the archives' relative_path is appended to (ends in "/")
  std::vector<std::string> components;  // ["cudnn"], ["cuda_cudart", "cuda_nvcc", ...]
  std::string platform;                 // "linux-x86_64" | "linux-sbsa"
  std::optional<int> cuda_major;        // cuDNN 9's per-CUDA-major level
  std::string version;                  // the stack's pinned version; the JSON must agree
  std::string prefix;                   // "/opt/gpuprep/cudnn/9.12.0.46-cuda12"
  std::string current_link;             // "/opt/gpuprep/cudnn/current"
  std::string ldconf_path;              // "/etc/ld.so.conf.d/gpuprep-cudnn.conf"
};

// Where gpuprep keeps redistributable installs of a layer: /opt/gpuprep/<layer>/<version>[-cuda<major>],
// with /opt/gpuprep/<layer>/current pointing at the one in use.
inline constexpr const char* kRedistRoot = "/opt/gpuprep";
std::string PrefixFor(const std::string& layer, const std::string& version, std::optional<int> cuda_major);
std::string CurrentLinkFor(const std::string& layer);
std::string LdConfPathFor(const std::string& layer);
// The lines of the ld.so.conf.d file: the current prefix's lib directories.
std::string LdConfText(const std::string& current_link);

// The request for `layer`'s ComponentSpec (whose source is "redist") on `arch` ("x86_64"); throws RedistError
// when the machine has no redistrib platform.
Request MakeRequest(const std::string& layer, const manifest::ComponentSpec& spec, const std::string& arch);

// The URL of a file in a redist base (an https/http URL ending in "/" or an absolute directory).
std::string BaseUrl(const std::string& base);

}  // namespace gp::redist
