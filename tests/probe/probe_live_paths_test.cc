// The live-only paths of the probe (nvcc, NVML, dlopen'ed cuDNN/NCCL/cudart, the Docker socket,
// nvidia-ctk) driven through fakes, over a temporary tree that a Fs presents as the live host.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "manifest/loader.h"
#include "probe/parsers.h"
#include "probe/probe.h"
#include "support/fakes.h"
#include "support/temp_dir.h"
#include "support/time_zone.h"
#include "sys/fs.h"

using namespace gp;

namespace {

class ScriptedNative : public sys::NativeLibs {
 public:
  sys::LibCall CudaRuntimeVersion(const std::vector<std::string>& dirs) override {
    cudart_dirs = dirs;
    ++cudart_calls;
    return cudart;
  }
  sys::LibCall CudnnVersion(const std::vector<std::string>&) override { return cudnn; }
  sys::LibCall NcclVersion(const std::vector<std::string>&) override { return nccl; }
  sys::NvmlInfo Nvml(const std::vector<std::string>&) override { return nvml; }
  sys::CudaDriverInfo CudaDriver() override { return {}; }
  sys::LibCall cudart, cudnn, nccl;
  sys::NvmlInfo nvml;
  int cudart_calls = 0;
  std::vector<std::string> cudart_dirs;
};

class ScriptedDocker : public sys::UnixHttp {
 public:
  sys::HttpResponse Get(const std::string& socket, const std::string& path,
                        std::chrono::milliseconds timeout) override {
    requests.push_back(socket + " " + path);
    CHECK(timeout.count() == 2000);
    auto it = answers.find(path);
    if (it == answers.end()) return {0, "", "connection refused"};
    return it->second;
  }
  std::map<std::string, sys::HttpResponse> answers;
  std::vector<std::string> requests;
};

sys::LibCall Loaded(const std::string& path, long value) {
  sys::LibCall c;
  c.loaded = true;
  c.path = path;
  c.value = value;
  return c;
}

}  // namespace

TEST_CASE(
    "live paths: nvcc, NVML mismatch, dlopen'ed cuDNN v8 and NCCL <= 2.8 codes, Docker engine, nvidia-ctk",
    "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023\n");
  t.Write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03", "");
  REQUIRE(::symlink("libnvidia-ml.so.535.129.03",
                    (t.path + "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").c_str()) == 0);
  t.Write("/usr/local/cuda-12.4/bin/nvcc", "");
  t.Write("/var/run/docker.sock", "");
  t.Write("/usr/bin/nvidia-ctk", "");
  t.Write("/usr/bin/docker", "");
  t.Write("/etc/cdi/nvidia.json",
          R"({"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[{"name":"all"}]})");
  test::LiveDiskFs fs(t.path);

  test::FakeCommandRunner runner;
  runner.strict = true;
  runner.On(
      "/usr/local/cuda-12.4/bin/nvcc --version",
      test::Exit(0,
                 "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n"));
  runner.On(
      "/usr/bin/nvidia-ctk --version",
      test::Exit(
          0,
          "NVIDIA Container Toolkit CLI version 1.17.8\ncommit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d\n"));
  ScriptedNative native;
  native.nvml.loaded = true;
  native.nvml.path = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  native.nvml.error = "Driver/library version mismatch";
  native.cudnn = Loaded("/usr/lib/x86_64-linux-gnu/libcudnn.so.8", 8907);
  native.nccl = Loaded("/usr/lib/x86_64-linux-gnu/libnccl.so.2", 2708);
  ScriptedDocker docker;
  docker.answers["/version"] = {200, R"({"Version":"28.3.2","ApiVersion":"1.51"})", ""};
  docker.answers["/info"] = {
      200,
      R"({"Runtimes":{"nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}},
                                 "DefaultRuntime":"runc","CDISpecDirs":["/etc/cdi","/var/run/cdi"],
                                 "DiscoveredDevices":[{"Source":"cdi","ID":"nvidia.com/gpu=all"}]})",
      ""};

  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.docker = &docker;
  env.compat = &manifest::EmbeddedCompat();
  env.env = {{"PATH", "/usr/local/bin:/usr/bin"}};
  auto h = probe::ProbeHost(env);

  CHECK(h.live);
  CHECK(runner.Joined() ==
        std::vector<std::string>{"/usr/local/cuda-12.4/bin/nvcc --version", "/usr/bin/nvidia-ctk --version"});
  CHECK(runner.calls[0].timeout.count() == 5000);
  CHECK(h.cuda.version == "12.4.131");
  CHECK(h.cuda.source == "nvcc");
  CHECK(h.cuda.path == "/usr/local/cuda-12.4");
  CHECK(native.cudart_calls == 0);  // nvcc answered
  CHECK(h.driver.module.version == "535.104.05");
  CHECK(h.driver.userspace_version == "535.129.03");  // the file name wins over NVML's answer
  CHECK(h.driver.nvml_error == std::string("Driver/library version mismatch"));
  CHECK(h.cudnn.version == "8.9.7");
  CHECK(h.cudnn.source == "dlopen:/usr/lib/x86_64-linux-gnu/libcudnn.so.8");
  CHECK(h.nccl.version == "2.7.8");
  CHECK(h.toolkit.ctk_version == "1.17.8");
  CHECK(docker.requests ==
        std::vector<std::string>{"/var/run/docker.sock /version", "/var/run/docker.sock /info"});
  CHECK(h.docker.engine_reachable);
  CHECK(h.docker.version == "28.3.2");
  CHECK(h.docker.runtimes == std::vector<std::string>{"nvidia", "runc"});
  CHECK(h.docker.default_runtime == "runc");
  CHECK(h.docker.cdi);
  CHECK(h.docker.cdi_devices == std::vector<std::string>{"nvidia.com/gpu=all"});
  CHECK(h.docker.cli_found);
}

TEST_CASE("live paths: cudart through dlopen when no file names the toolkit's version; header vs library",
          "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/usr/local/cuda-13.0/lib/libcudart.so.13", "");
  t.Write("/usr/local/cuda-13.0/include/cudnn_version.h",
          "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n");
  t.Write("/usr/local/cuda-13.0/include/nccl.h",
          "#define NCCL_MAJOR 2\n#define NCCL_MINOR 27\n#define NCCL_PATCH 3\n");
  test::LiveDiskFs fs(t.path);
  test::FakeCommandRunner runner;
  runner.strict = true;
  ScriptedNative native;
  native.cudart = Loaded("/usr/local/cuda-13.0/lib/libcudart.so.13", 13000);
  native.cudnn = Loaded("/usr/local/cuda-13.0/lib/libcudnn.so.9", 91900);
  native.nccl = Loaded("/usr/local/cuda-13.0/lib/libnccl.so.2", 22809);
  ScriptedDocker docker;

  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.docker = &docker;
  env.compat = &manifest::EmbeddedCompat();
  env.env = {{"PATH", "/usr/bin"}, {"DOCKER_HOST", "tcp://10.0.0.1:2375"}};
  auto h = probe::ProbeHost(env);

  CHECK(runner.calls.empty());
  CHECK(h.cuda.version == "13.0");
  CHECK(h.cuda.source == "dlopen:/usr/local/cuda-13.0/lib/libcudart.so.13");
  CHECK(native.cudart_dirs ==
        std::vector<std::string>{"/usr/local/cuda-13.0/lib64", "/usr/local/cuda-13.0/lib"});
  // Header and library agree: the header's answer stays, the library path is recorded.
  CHECK(h.cudnn.version == "9.19.0");
  CHECK(h.cudnn.source == "header:/usr/local/cuda-13.0/include/cudnn_version.h");
  CHECK(h.cudnn.path == "/usr/local/cuda-13.0/lib/libcudnn.so.9");
  // They disagree: the loaded library is what programs get, the header is noted.
  CHECK(h.nccl.version == "2.28.9");
  CHECK(h.nccl.source == "dlopen:/usr/local/cuda-13.0/lib/libnccl.so.2");
  CHECK(h.nccl.notes ==
        std::vector<std::string>{
            "header:/usr/local/cuda-13.0/include/nccl.h says 2.27.3 but the loaded library is 2.28.9"});
  CHECK(docker.requests.empty());
  CHECK(h.docker.detail == "DOCKER_HOST=tcp://10.0.0.1:2375 is not a unix socket; not contacted");
}

TEST_CASE("live paths: an nvcc that times out and an absent Docker socket are findings", "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/usr/local/cuda/bin/nvcc", "");
  test::LiveDiskFs fs(t.path);
  test::FakeCommandRunner runner;
  sys::CommandResult slow;
  slow.exit_code = 143;
  slow.timed_out = true;
  runner.On("/usr/local/cuda/bin/nvcc --version", slow);
  ScriptedNative native;
  native.cudart.error = "libcudart.so.13: cannot open shared object file: No such file or directory";
  ScriptedDocker docker;
  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.docker = &docker;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  CHECK_FALSE(h.cuda.found);
  CHECK(h.cuda.notes == std::vector<std::string>{"/usr/local/cuda/bin/nvcc --version failed (timed out)"});
  CHECK(docker.requests.empty());
  CHECK(h.docker.detail == "/var/run/docker.sock not found (engine not installed or not running)");
}

TEST_CASE("--root with null seams: a dangling libnvidia-ml.so.1 still finds the versioned library",
          "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03", "");
  t.Write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.530.30.02", "");
  REQUIRE(::symlink("libnvidia-ml.so.550.54.15",
                    (t.path + "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1").c_str()) == 0);
  sys::DiskFs fs(t.path);
  probe::ProbeEnv env;  // runner, native and docker stay null, as main passes them with --root
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  CHECK_FALSE(h.live);
  CHECK(h.driver.userspace_version == "535.129.03");
  CHECK(h.driver.userspace_source == "file:/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.129.03");
  CHECK(h.docker.detail == "not contacted (--root)");
}

TEST_CASE("--root: /var/run -> /run (absolute, as on Ubuntu) resolves inside the tree", "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/run/cdi/nvidia.yaml", "kind: nvidia.com/gpu\ndevices:\n- name: all\n");
  t.Write("/run/reboot-required", "*** System restart required ***\n");
  t.Write("/var/lib/.keep", "");
  REQUIRE(::symlink("/run", (t.path + "/var/run").c_str()) == 0);
  sys::DiskFs fs(t.path);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  CHECK(h.docker.cdi_devices == std::vector<std::string>{"nvidia.com/gpu=all"});
  CHECK(h.reboot_required);
}

TEST_CASE("--root: architecture from /bin/sh's ELF header without dpkg; a broken daemon.json is a finding",
          "[probe]") {
  std::ifstream sh("/bin/sh", std::ios::binary);
  std::string header(64, '\0');
  sh.read(&header[0], 64);
  REQUIRE(sh.gcount() == 64);
  test::TempDir t("gpuprep-probe");
  t.Write("/bin/sh", header);
  t.Write("/etc/docker/daemon.json",
          "{\n  \"runtimes\": {\n    \"nvidia\": {\"path\": \"nvidia-container-runtime\",}\n  }\n}\n");
  sys::DiskFs fs(t.path);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  CHECK(h.arch == "x86_64");  // the build machine's /bin/sh
  CHECK(h.docker.daemon_json_error ==
        "parse error at line 3, column 51: syntax error while parsing object key - unexpected '}'; "
        "expected string literal");
  CHECK(h.docker.daemon_json_runtimes.empty());
}

TEST_CASE("--root: daemon.json linked to a file that is not JSON: said so, nothing of the file quoted",
          "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/etc/secretfile", "rXoXoXt:$6$saltsalt$hashhash:19000:0:99999:7:::\n");
  t.Write("/etc/docker/.keep", "");
  REQUIRE(::symlink("/etc/secretfile", (t.path + "/etc/docker/daemon.json").c_str()) == 0);
  sys::DiskFs fs(t.path);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  CHECK(h.docker.daemon_json_error == "a symbolic link to a file that is not a JSON object");
}

TEST_CASE("--root dpkg: another architecture's removed stanza keeps the package; the updates journal wins",
          "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/var/lib/dpkg/status",
          "Package: libnvidia-compute-535\nStatus: install ok installed\nArchitecture: amd64\nVersion: "
          "535.129.03-0ubuntu1\n\n"
          "Package: libnvidia-compute-535\nStatus: deinstall ok config-files\nArchitecture: i386\nVersion: "
          "535.104.05-0ubuntu1\n\n"
          "Package: nvidia-utils-535\nStatus: install ok installed\nArchitecture: amd64\nVersion: "
          "535.129.03-0ubuntu1\n");
  t.Write("/var/lib/dpkg/updates/0000",
          "Package: nvidia-utils-535\nStatus: purge ok not-installed\nArchitecture: amd64\n");
  sys::DiskFs fs(t.path);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.compat = &manifest::EmbeddedCompat();
  auto h = probe::ProbeHost(env);
  REQUIRE(h.packages.count("libnvidia-compute-535"));
  CHECK(h.packages.at("libnvidia-compute-535").version == "535.129.03-0ubuntu1");
  CHECK_FALSE(h.packages.count("nvidia-utils-535"));
  // A pending journal record means dpkg stopped before merging it.
  CHECK(h.dpkg_interrupted == std::vector<std::string>{"nvidia-utils-535"});
}

TEST_CASE("live paths: an empty CUDA_HOME is not credited with another toolkit's cudart", "[probe]") {
  test::TempDir t("gpuprep-probe");
  t.Write("/opt/empty/.keep", "");
  t.Write("/usr/local/cuda-12.1/lib/libcudart.so.12", "");
  test::LiveDiskFs fs(t.path);
  test::FakeCommandRunner runner;
  runner.strict = true;
  ScriptedNative native;
  native.cudart = Loaded("/usr/local/cuda-12.1/lib/libcudart.so.12", 12010);
  probe::ProbeEnv env;
  env.fs = &fs;
  env.runner = &runner;
  env.native = &native;
  env.compat = &manifest::EmbeddedCompat();
  env.env = {{"CUDA_HOME", "/opt/empty"}};
  auto h = probe::ProbeHost(env);
  CHECK(native.cudart_calls == 1);
  CHECK(native.cudart_dirs == std::vector<std::string>{"/opt/empty/lib64", "/opt/empty/lib",
                                                       "/usr/local/cuda-12.1/lib64",
                                                       "/usr/local/cuda-12.1/lib"});
  CHECK(h.cuda.version == "12.1");
  CHECK(h.cuda.path == "/usr/local/cuda-12.1");
  CHECK(runner.calls.empty());
}

namespace {
// Answers GET paths over the "socket", recording each; no timeout expectations.
class RecordingDocker : public sys::UnixHttp {
 public:
  sys::HttpResponse Get(const std::string&, const std::string& path, std::chrono::milliseconds) override {
    requests.push_back(path);
    auto it = answers.find(path);
    if (it == answers.end()) return {404, R"({"message":"No such image"})", ""};
    return it->second;
  }
  std::map<std::string, sys::HttpResponse> answers;
  std::vector<std::string> requests;
};
}  // namespace

TEST_CASE(
    "live probe: the stack's image is one inspect call; the API version the probe read is not asked again",
    "[probe]") {
  RecordingDocker docker;
  docker.answers["/version"] = {200, R"({"Version":"28.3.2","ApiVersion":"1.51"})", ""};
  docker.answers["/v1.51/images/nvcr.io/nvidia/pytorch:24.05-py3/json"] = {
      200, R"({"Id":"sha256:1","RepoDigests":[],"Config":{"Env":["CUDA_VERSION=12.4.1.003"]}})", ""};
  probe::ProbeEnv env;
  env.docker = &docker;
  probe::HostFacts facts;
  facts.docker.engine_reachable = true;
  facts.docker.socket = "/var/run/docker.sock";
  CHECK(probe::ParseDockerVersionBody(docker.answers["/version"].body, &facts.docker.api_version) ==
        "28.3.2");
  CHECK(facts.docker.api_version == "1.51");
  probe::ProbeImage(env, "nvcr.io/nvidia/pytorch:24.05-py3", facts);
  CHECK(docker.requests == std::vector<std::string>{"/v1.51/images/nvcr.io/nvidia/pytorch:24.05-py3/json"});
  CHECK(facts.docker.image.present);
  CHECK(facts.docker.image.cuda == "12.4.1");

  // Without the probe's answer (an engine whose /version lacked ApiVersion), the engine is asked first.
  docker.requests.clear();
  facts.docker.api_version = "";
  probe::ProbeImage(env, "nvcr.io/nvidia/pytorch:24.05-py3", facts);
  CHECK(docker.requests ==
        std::vector<std::string>{"/version", "/v1.51/images/nvcr.io/nvidia/pytorch:24.05-py3/json"});
  std::string api;
  CHECK(probe::ParseDockerVersionBody(R"({"Version":"1","ApiVersion":"1.51/../x"})", &api) == "1");
  CHECK(api.empty());
}

TEST_CASE("live paths: an engine that started before the toolkit's hook was installed", "[probe]") {
  // dockerd's start (its pid file's /proc/PID/stat field 22, in clock ticks after /proc/stat's btime)
  // against dpkg.log's events of nvidia-container-toolkit (local time, as dpkg writes it).
  // The clock and the zone are fixed: central European time an hour after its 2026 spring change (dpkg.log
  // written across it), whatever this machine's zone.
  test::ScopedTimeZone zone("CET-1CEST,M3.5.0,M10.5.0/3");
  const long hz = ::sysconf(_SC_CLK_TCK);
  const long long now = 1774749600;  // 2026-03-29 02:00 UTC, 04:00 CEST; the change was at 01:00 UTC
  auto stamp = [](long long t) {
    char buf[32];
    const time_t tt = static_cast<time_t>(t);
    struct tm tm;
    ::localtime_r(&tt, &tm);
    ::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return std::string(buf);
  };
  auto run = [&](long long started, const std::string& dpkg_log, bool write_pid = true) {
    test::TempDir t("gpuprep-probe");
    t.Write("/var/run/docker.sock", "");
    t.Write("/usr/bin/docker", "");
    t.Write("/usr/bin/nvidia-container-runtime-hook", "");
    if (write_pid) t.Write("/var/run/docker.pid", "4242\n");
    const long long boot = now - 100000;
    // The command name holds a space and a parenthesis, as comm may.
    t.Write("/proc/4242/stat",
            "4242 (docker d)) S 1 4242 4242 0 -1 4194560 30000 0 0 0 25 10 0 0 20 0 30 0 " +
                std::to_string((started - boot) * hz) + " 2000000000 9000\n");
    t.Write("/proc/stat", "cpu  1 2 3 4\nbtime " + std::to_string(boot) + "\nprocesses 99\n");
    t.Write("/var/log/dpkg.log", dpkg_log);
    test::LiveDiskFs fs(t.path);
    ScriptedDocker docker;
    docker.answers["/version"] = {200, R"({"Version":"20.10.24+dfsg1","ApiVersion":"1.41"})", ""};
    docker.answers["/info"] = {200, R"({"Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc"})", ""};
    probe::ProbeEnv env;
    env.fs = &fs;
    env.docker = &docker;
    env.compat = &manifest::EmbeddedCompat();
    env.env = {{"PATH", "/usr/local/bin:/usr/bin"}};
    return probe::ProbeHost(env).docker;
  };
  const std::string installed_now =
      stamp(now - 60) + " install nvidia-container-toolkit:amd64 <none> 1.19.1-1\n" + stamp(now - 60) +
      " status installed nvidia-container-toolkit:amd64 1.19.1-1\n";
  const std::string upgraded_now =
      stamp(now - 60) + " upgrade nvidia-container-toolkit:amd64 1.17.8-1 1.19.1-1\n";
  CHECK(run(now - 3600, installed_now).started_before_hook);       // up an hour, installed a minute ago
  CHECK_FALSE(run(now - 3600, upgraded_now).started_before_hook);  // an upgrade keeps the hook's path
  CHECK_FALSE(run(now - 10, installed_now).started_before_hook);   // restarted after the install
  CHECK_FALSE(run(now - 3600, installed_now, false).started_before_hook);  // no pid file: unknown
  CHECK_FALSE(run(now - 3600, "").started_before_hook);                    // the log never names it
  // Removed while the engine ran, the engine restarted, the toolkit installed again.
  const std::string removed =
      stamp(now - 7200) + " install nvidia-container-toolkit:amd64 <none> 1.17.8-1\n" + stamp(now - 4000) +
      " remove nvidia-container-toolkit:amd64 1.17.8-1 <none>\n" + installed_now;
  CHECK(run(now - 3600, removed).started_before_hook);
  CHECK_FALSE(run(now - 5000, removed).started_before_hook);  // it was there when the engine started
  // The parser alone: unrelated packages and malformed lines are ignored.
  CHECK_FALSE(probe::HookAbsentAt(
      "garbage\n2026-13-45 99:99:99 install nvidia-container-toolkit:amd64 <none> 1\n", now));
  CHECK_FALSE(
      probe::HookAbsentAt(stamp(now) + " install nvidia-container-toolkit-base:amd64 <none> 1\n", now - 5));
}
