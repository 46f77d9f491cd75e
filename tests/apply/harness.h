// Shared pieces of the plan/apply tests: a temp directory used as the host's "/" through DiskFs, a test
// stack shaped like the embedded R535 one, a fake HTTP client and fake native libraries.
#pragma once
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "manifest/model.h"
#include "probe/host.h"
#include "support/hosts.h"
#include "support/temp_dir.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "util/version.h"

namespace gp::test {

// Other tests' RunCli calls leave spdlog pointing at a stream that is gone; apply tests log to nothing.
inline void QuietLogs() {
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("quiet", std::make_shared<spdlog::sinks::null_sink_mt>()));
}

class TempRoot {
 public:
  TempRoot() : fs_(std::make_unique<sys::DiskFs>(dir_.path)) { QuietLogs(); }
  sys::DiskFs& fs() { return *fs_; }
  const std::string& path() const { return dir_.path; }
  void Write(const std::string& p, const std::string& contents) {
    fs_->WriteAtomic(p, contents, 0644, false);
  }
  std::string Read(const std::string& p) const { return fs_->Read(p).value_or("<missing>"); }
  bool Exists(const std::string& p) const { return fs_->Exists(p); }
  void Symlink(const std::string& target, const std::string& p) {
    fs_->MakeDirs(p.substr(0, p.rfind('/')), 0755);
    // Like `ln -sfn`: an existing link is replaced (the fake `systemctl enable` runs more than once).
    const std::string host = fs_->HostPath(p);
    if (::symlink(target.c_str(), host.c_str()) != 0 &&
        (errno != EEXIST || ::unlink(host.c_str()) != 0 || ::symlink(target.c_str(), host.c_str()) != 0))
      throw std::runtime_error("symlink " + host + ": " + std::strerror(errno));
  }

 private:
  TempDir dir_{"gpuprep-apply"};  // mkdtemp's: mode 0700
  std::unique_ptr<sys::DiskFs> fs_;
};

inline manifest::Pinned Pin(const std::string& v) {
  manifest::Pinned p;
  p.version = Version::Must(v);
  return p;
}

// The embedded R535 stack's shape, with a repository pinned by sha256.
inline manifest::Stack TestStack() {
  manifest::Stack s;
  s.name = "test-r535";
  s.os = {{"ubuntu", "22.04"}};
  manifest::AptRepository r;
  r.name = "cuda";
  r.url = "https://repo.example/cuda/";
  r.suite = "/";
  r.keyring_url = "https://repo.example/cuda/key.gpg";
  r.keyring_path = "/usr/share/keyrings/cuda-archive-keyring.gpg";
  r.keyring_sha256 = "";  // set by tests
  r.list_path = "/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list";
  s.repositories.push_back(r);
  s.driver.branch = 535;
  s.driver.version = Pin("535.129.03");
  s.driver.packages = {{"cuda-drivers", "535.129.03-1"}};
  s.driver.fabricmanager_packages = {{"nvidia-fabricmanager-535", "535.129.03-1"}};
  s.cuda.version = Pin("12.2.2");
  s.cuda.optional = true;
  s.cuda.packages = {{"cuda-toolkit-12-2", "12.2.2-1"}};
  s.cudnn.version = Pin("8.9.7.29");
  s.cudnn.packages = {{"libcudnn8", "8.9.7.29-1+cuda12.2"}};
  s.nccl.version = Pin("2.18.5");
  s.nccl.packages = {{"libnccl2", "2.18.5-1+cuda12.2"}, {"libnccl-dev", "2.18.5-1+cuda12.2"}};
  s.container_toolkit.enabled = false;
  return s;
}

// A bare Ubuntu 22.04 host with `n` H100s bound to nouveau.
inline probe::HostFacts BareHost(int n = 2) {
  probe::HostFacts f;
  f.os = {"ubuntu", "22.04", "Ubuntu 22.04.4 LTS", "jammy"};
  f.kernel = "5.15.0-105-generic";
  f.arch = "x86_64";
  for (int i = 0; i < n; ++i) {
    f.gpus.push_back(test::H100Gpu(i, "nouveau"));
  }
  f.driver.nouveau_loaded = true;
  f.driver.secure_boot = false;
  return f;
}

// The stack repository's Packages file as apt downloads it: every package the stack names at its version,
// plus a newer point release of each (which the pins must not take).
inline std::string RepoPackages(const manifest::Stack& s) {
  std::string out;
  auto add = [&out](const manifest::AptPackage& p) {
    for (const std::string& v : {p.version, "9" + p.version})
      out += "Package: " + p.name + "\nVersion: " + v + "\nArchitecture: amd64\nFilename: ./" + p.name +
             ".deb\n\n";
  };
  for (const auto& p : s.driver.packages) add(p);
  for (const auto& p : s.driver.fabricmanager_packages) add(p);
  for (const auto* c : {&s.cuda, &s.cudnn, &s.nccl})
    for (const auto& p : c->packages) add(p);
  return out;
}

// One dpkg status stanza.
inline std::string DpkgStanza(const std::string& name, const std::string& version, bool held = true) {
  return "Package: " + name + "\nStatus: " + (held ? "hold" : "install") +
         " ok installed\nArchitecture: amd64\nVersion: " + version + "\nDescription: test\n multi-line\n\n";
}

// dpkg's status once the stack's driver, CUDA, cuDNN and NCCL packages are installed (held or not).
inline std::string InstalledStackStatus(const manifest::Stack& s, bool held) {
  std::string out;
  for (const auto& p : s.driver.packages) out += DpkgStanza(p.name, p.version, held);
  for (const auto* c : {&s.cuda, &s.cudnn, &s.nccl})
    for (const auto& p : c->packages) out += DpkgStanza(p.name, p.version, held);
  return out;
}

// /proc/driver/nvidia/version with the test stack's 535.129.03 module loaded (after the reboot).
inline constexpr const char* kNvrm535 =
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n";

class FakeHttp : public sys::HttpClient {
 public:
  std::map<std::string, sys::HttpResponse> answers;
  std::vector<std::string> requests;
  sys::HttpResponse Get(const std::string& url, std::chrono::milliseconds) override {
    requests.push_back(url);
    auto it = answers.find(url);
    if (it == answers.end()) return {404, "", ""};
    return it->second;
  }
};

class FakeNative : public sys::NativeLibs {
 public:
  sys::NvmlInfo nvml;
  sys::CudaDriverInfo cuda;
  sys::LibCall cudnn, nccl, cudart;
  std::vector<std::string> cudart_dirs;  // where the last CudaRuntimeVersion call looked
  sys::LibCall CudaRuntimeVersion(const std::vector<std::string>& dirs) override {
    cudart_dirs = dirs;
    return cudart;
  }
  sys::LibCall CudnnVersion(const std::vector<std::string>&) override { return cudnn; }
  sys::LibCall NcclVersion(const std::vector<std::string>&) override { return nccl; }
  sys::NvmlInfo Nvml(const std::vector<std::string>&) override { return nvml; }
  sys::CudaDriverInfo CudaDriver() override { return cuda; }

  // A healthy host with `n` GPUs on driver 535.129.03 and the test stack's libraries.
  static FakeNative Healthy(int n) {
    FakeNative f;
    f.nvml.loaded = true;
    f.nvml.driver_version = "535.129.03";
    f.nvml.device_count = n;
    f.cuda.loaded = true;
    f.cuda.driver_api_version = 12020;
    f.cuda.device_count = n;
    f.cudnn = {true, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", 8907, ""};
    f.nccl = {true, "/usr/lib/x86_64-linux-gnu/libnccl.so.2", 21805, ""};
    return f;
  }
};

}  // namespace gp::test
