// The real probe of whatever machine runs the tests: invariants checked against facts read independently
// (os-release, uname, the PCI bus, PATH), so it holds with or without a GPU, a driver or a toolkit.
#include <sys/utsname.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "manifest/loader.h"
#include "probe/probe.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/process.h"
#include "util/version.h"

extern char** environ;

using namespace gp;

namespace {

// Records what the probe runs, then runs it for real.
class RecordingRunner : public sys::CommandRunner {
 public:
  sys::CommandResult Run(const sys::Command& cmd) override {
    argv0.push_back(cmd.argv.empty() ? "" : cmd.argv[0]);
    return real.Run(cmd);
  }
  sys::RealCommandRunner real;
  std::vector<std::string> argv0;
};

// Facts read here independently of gpuprep's probe code: this machine's os-release ID and uname.
std::string OsReleaseId() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("ID=", 0) == 0) {
      std::string v = line.substr(3);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "";
}

// NVIDIA display/3D controllers on the PCI bus (vendor 0x10de, class 0x03xxxx).
size_t NvidiaGpusOnPciBus() {
  size_t n = 0;
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/pci/devices", ec)) {
    std::ifstream vendor(dev.path() / "vendor"), klass(dev.path() / "class");
    std::string v, c;
    vendor >> v;
    klass >> c;
    if (v == "0x10de" && c.rfind("0x03", 0) == 0) ++n;
  }
  return n;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("live probe: invariants that hold on any machine", "[probe][live]") {
  sys::DiskFs fs("/");
  RecordingRunner runner;
  sys::DlopenNativeLibs native;
  sys::RealUnixHttp docker;
  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.docker = &docker;
  env.compat = &manifest::EmbeddedCompat();
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto h = probe::ProbeHost(env);

  struct utsname u {};
  REQUIRE(::uname(&u) == 0);
  CHECK(h.live);
  CHECK(h.os.id == OsReleaseId());
  CHECK(h.kernel == u.release);
  CHECK(h.arch == u.machine);
  CHECK(h.cpus > 0);
  CHECK(h.memory_bytes > 0);
  CHECK(h.shm_bytes > 0);
  CHECK(h.disk_free_bytes.has_value());
  CHECK(h.gpus.size() == NvidiaGpusOnPciBus());
  const bool module =
      ::access("/proc/driver/nvidia/version", F_OK) == 0 || ::access("/sys/module/nvidia", F_OK) == 0;
  CHECK(h.driver.module.loaded == module);
  if (h.driver.module.loaded) CHECK(Version::Parse(h.driver.module.version).has_value());
  if (!h.driver.userspace_version.empty()) CHECK(Version::Parse(h.driver.userspace_version).has_value());

  for (const probe::Component* c : {&h.cuda, &h.cudnn, &h.nccl}) {
    INFO("component " << c->version << " from " << c->source);
    if (!c->found) continue;
    auto v = Version::Parse(c->version);
    REQUIRE(v);
    CHECK_FALSE(c->source.empty());
    if (c->cuda_major) CHECK(*c->cuda_major >= 10);
  }
  if (h.cuda.found) {
    if (h.cuda.cuda_major)
      CHECK(static_cast<int>(Version::Parse(h.cuda.version)->major()) == *h.cuda.cuda_major);
    if (!h.cuda.path.empty()) CHECK(::access(h.cuda.path.c_str(), F_OK) == 0);
  }

  CHECK(h.docker.cli_found == OnPath("docker"));
  if (::access("/var/run/docker.sock", F_OK) != 0) CHECK_FALSE(h.docker.engine_reachable);
  for (const auto& argv0 : runner.argv0) CHECK_FALSE(argv0.empty());
}
