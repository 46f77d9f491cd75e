// The stand-in registry (registry_server.py) over loopback HTTPS with a throwaway certificate for
// 127.0.0.1, and builders for the documents a registry serves: config blobs, OCI and Docker manifests,
// indexes, each with the sha256 digest of its exact bytes.
#pragma once
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "apply/harness.h"
#include "redist/loopback.h"
#include "support/ready_pipe.h"
#include "sys/http.h"
#include "sys/sha256.h"

namespace gp::test {

inline const char* kOciIndexType = "application/vnd.oci.image.index.v1+json";
inline const char* kDockerListType = "application/vnd.docker.distribution.manifest.list.v2+json";
inline const char* kOciManifestType = "application/vnd.oci.image.manifest.v1+json";
inline const char* kDockerManifestType = "application/vnd.docker.distribution.manifest.v2+json";
inline const char* kOciConfigType = "application/vnd.oci.image.config.v1+json";
inline const char* kDockerConfigType = "application/vnd.docker.container.image.v1+json";

struct Doc {
  std::string type, body, digest;
  nlohmann::json Descriptor(const nlohmann::json& platform = nullptr) const {
    nlohmann::json d = {{"mediaType", type}, {"digest", digest}, {"size", body.size()}};
    if (!platform.is_null()) d["platform"] = platform;
    return d;
  }
};

inline Doc MakeDoc(const std::string& type, const nlohmann::json& j) {
  Doc d{type, j.dump(3), ""};
  d.digest = "sha256:" + sys::Sha256Hex(d.body);
  return d;
}

// An image config whose Env is `env` (NGC's shape: PATH, CUDA_VERSION, ...).
inline Doc ConfigDoc(const std::vector<std::string>& env, const std::string& type = kOciConfigType) {
  return MakeDoc(type, {{"architecture", "amd64"},
                        {"os", "linux"},
                        {"config", {{"Env", env}, {"Entrypoint", {"/opt/nvidia/nvidia_entrypoint.sh"}}}},
                        {"rootfs", {{"type", "layers"}, {"diff_ids", {"sha256:" + std::string(64, '1')}}}}});
}

// A single-platform manifest pointing at `config` (one layer that is never fetched).
inline Doc ManifestDoc(const Doc& config, const std::string& type = kOciManifestType) {
  const std::string layer = type == kOciManifestType ? "application/vnd.oci.image.layer.v1.tar+gzip"
                                                     : "application/vnd.docker.image.rootfs.diff.tar.gzip";
  return MakeDoc(
      type,
      {{"schemaVersion", 2},
       {"mediaType", type},
       {"config", config.Descriptor()},
       {"layers", {{{"mediaType", layer}, {"digest", "sha256:" + std::string(64, '2')}, {"size", 1234}}}}});
}

inline nlohmann::json Platform(const std::string& os, const std::string& arch) {
  return {{"os", os}, {"architecture", arch}};
}

class StandInRegistry {
 public:
  explicit StandInRegistry(const TempRoot& dir) : dir_(dir.path()) {
    ca_ = dir_ + "/registry.crt";
    if (Spawn({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
               "-nodes", "-days", "1", "-subj", "/CN=gpuprep registry test", "-addext",
               "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", dir_ + "/registry.key", "-out",
               ca_}) != 0)
      throw std::runtime_error("openssl req failed");
    SetState({{"token", nullptr}});
    ReadyPipe ready;
    Spawn({"python3", std::string(GP_SOURCE_DIR) + "/tests/docker/registry_server.py", dir_ + "/state.json",
           dir_ + "/log", "--ready-fd", std::to_string(ready.write_fd()), "--cert", ca_, "--key",
           dir_ + "/registry.key"},
          false, &pid_, &ready);
    try {
      port_ = ready.WaitLine("registry_server.py");  // written once it listens
    } catch (...) {
      Stop();
      throw;
    }
  }
  ~StandInRegistry() { Stop(); }
  StandInRegistry(const StandInRegistry&) = delete;
  StandInRegistry& operator=(const StandInRegistry&) = delete;

  // The state registry_server.py documents; read again by the server for every request.
  void SetState(const nlohmann::json& state) {
    std::ofstream(dir_ + "/state.json.tmp") << state.dump();
    if (::rename((dir_ + "/state.json.tmp").c_str(), (dir_ + "/state.json").c_str()) != 0)
      throw std::runtime_error("stand-in registry: cannot write " + dir_ + "/state.json");
    std::ofstream(dir_ + "/log", std::ios::trunc);  // the request log starts again
  }
  std::string domain() const { return "127.0.0.1:" + port_; }
  const std::string& ca() const { return ca_; }
  std::vector<nlohmann::json> Log() const {
    std::vector<nlohmann::json> out;
    std::istringstream in(Slurp(dir_ + "/log"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

 private:
  void Stop() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }

  std::string dir_, ca_, port_;
  pid_t pid_ = -1;
};

// The real curl client, told to trust the stand-in registry's certificate (what the system's CA store
// does for a real registry).
class TrustingHttp : public sys::HttpClient {
 public:
  explicit TrustingHttp(std::string ca) : ca_(std::move(ca)), real_(sys::MakeCurlHttpClient()) {}
  sys::HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout) override {
    return real_->Get(url, timeout);
  }
  sys::HttpResponse Send(const sys::HttpRequest& req) override {
    sys::HttpRequest r = req;
    r.ca_file = ca_;
    ++sent;
    return real_->Send(r);
  }
  int sent = 0;

 private:
  std::string ca_;
  std::unique_ptr<sys::HttpClient> real_;
};

}  // namespace gp::test
