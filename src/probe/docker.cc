// Docker and the NVIDIA Container Toolkit: the engine over its unix socket (live only), daemon.json,
// the toolkit's packages and `nvidia-ctk --version` (live only). CDI specs: probe/cdi.cc.
#include <time.h>

#include <nlohmann/json.hpp>

#include "probe/parsers.h"
#include "probe/steps.h"
#include "sys/clock.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

using nlohmann::json;

const char* const kToolkitPackages[] = {"nvidia-container-toolkit", "nvidia-container-toolkit-base",
                                        "libnvidia-container-tools", "libnvidia-container1"};
constexpr auto kSocketTimeout = std::chrono::milliseconds(2000);

std::vector<std::string> StringList(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<std::string> Keys(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (auto e = it->begin(); e != it->end(); ++e) out.push_back(e.key());
  return out;  // nlohmann's object is a std::map: sorted
}

// An executable named `name` in one of PATH's directories (live) or the usual bin dirs (--root).
std::string FindProgram(const ProbeEnv& env, const std::string& name) {
  std::vector<std::string> dirs;
  if (Live(env))
    dirs = Split(EnvVar(env, "PATH"), ':');
  else
    dirs = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  for (const auto& d : dirs) {
    if (!d.empty() && d[0] == '/' && env.fs->Exists(d + "/" + name)) return d + "/" + name;
  }
  return "";
}

void ProbeToolkit(const ProbeEnv& env, HostFacts& facts) {
  for (const char* name : kToolkitPackages) {
    if (const auto* p = FindPackage(facts, name)) facts.toolkit.packages[name] = p->version;
  }
  if (!Live(env) || !env.runner) return;
  std::string ctk = FindProgram(env, "nvidia-ctk");
  if (ctk.empty()) return;
  sys::Command cmd;
  cmd.argv = {ctk, "--version"};
  cmd.timeout = kSocketTimeout;
  auto res = env.runner->Run(cmd);
  if (auto v = res.ok() ? ParseCtkVersion(res.out) : std::nullopt)
    facts.toolkit.ctk_version = *v;
  else
    facts.probe_notes.push_back("container_toolkit: " + ctk + " --version failed" +
                                (res.timed_out ? " (timed out)" : ""));
}

// When the process in /var/run/docker.pid (dockerd's default pid file) started, in seconds since the epoch:
// its start time in clock ticks after boot (/proc/PID/stat, field 22, proc(5)) plus the boot time (/proc/stat
// btime). nullopt when any of it cannot be read.
std::optional<int64_t> EngineStartTime(const ProbeEnv& env) {
  auto pid_text = env.fs->ReadPrefix("/var/run/docker.pid", 32);
  auto pid = pid_text ? ParseUnsigned(Trim(*pid_text)) : std::nullopt;
  if (!pid || *pid == 0) return std::nullopt;
  auto stat = env.fs->ReadPrefix("/proc/" + std::to_string(*pid) + "/stat", 4096);
  if (!stat) return std::nullopt;
  auto close = stat->rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  auto fields = SplitWords(std::string_view(*stat).substr(close + 1));
  if (fields.size() < 20 || fields[0].empty()) return std::nullopt;  // fields[0] is field 3 (state)
  auto ticks = ParseUnsigned(fields[19]);                            // field 22: starttime
  auto proc_stat = env.fs->ReadPrefix("/proc/stat", 1 << 16);
  uint64_t btime = 0;  // 0: not found
  if (proc_stat)
    for (const auto& line : Split(*proc_stat, '\n'))
      if (StartsWith(line, "btime "))
        btime = ParseUnsigned(Trim(std::string_view(line).substr(6))).value_or(0);
  const long hz = sys::ClockTicksPerSecond();
  if (!ticks || btime == 0 || hz <= 0) return std::nullopt;
  return static_cast<int64_t>(btime + *ticks / static_cast<uint64_t>(hz));
}

// "2026-12-02 11:34:15" (dpkg.log's local time) -> seconds since the epoch; nullopt when malformed.
std::optional<int64_t> LogTime(std::string_view date, std::string_view time) {
  struct tm tm = {};
  const std::string text = std::string(date) + " " + std::string(time);
  if (!::strptime(text.c_str(), "%Y-%m-%d %H:%M:%S", &tm)) return std::nullopt;
  tm.tm_isdst = -1;
  const time_t t = ::mktime(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t);
}

void ProbeEngine(const ProbeEnv& env, DockerInfo& d, std::vector<std::string>& cdi_dirs) {
  if (!Live(env)) {
    d.detail = "not contacted (--root)";
    return;
  }
  if (!env.docker) {
    d.detail = "not contacted";
    return;
  }
  std::string socket = "/var/run/docker.sock";
  std::string host = EnvVar(env, "DOCKER_HOST");
  if (StartsWith(host, "unix://")) {
    socket = host.substr(7);
  } else if (!host.empty()) {
    d.detail = "DOCKER_HOST=" + host + " is not a unix socket; not contacted";
    return;
  }
  if (!env.fs->Exists(socket)) {
    d.detail = socket + " not found (engine not installed or not running)";
    return;
  }
  auto ver = env.docker->Get(socket, "/version", kSocketTimeout);
  if (!ver.ok()) {
    d.detail = socket + ": " + (ver.error.empty() ? "HTTP " + std::to_string(ver.status) : ver.error);
    return;
  }
  d.engine_reachable = true;
  d.socket = socket;
  if (auto v = ParseDockerVersionBody(ver.body, &d.api_version)) d.version = *v;
  auto info = env.docker->Get(socket, "/info", kSocketTimeout);
  if (!info.ok()) {
    d.detail =
        socket + " /info: " + (info.error.empty() ? "HTTP " + std::to_string(info.status) : info.error);
    return;
  }
  auto body = ParseDockerInfoBody(info.body);
  d.runtimes = body.runtimes;
  d.default_runtime = body.default_runtime;
  d.containers_running = body.containers_running;
  for (const auto& dir : body.cdi_spec_dirs) cdi_dirs.push_back(dir);
  d.cdi = !body.cdi_spec_dirs.empty();  // refined below: needs an nvidia.com/gpu spec too
  for (const auto& dev : body.cdi_devices) d.cdi_devices.push_back(dev);
  if (FindProgram(env, "nvidia-container-runtime-hook").empty()) return;
  auto started = EngineStartTime(env);
  auto log = started ? env.fs->Read("/var/log/dpkg.log") : std::nullopt;
  d.started_before_hook = log && HookAbsentAt(*log, *started);
}

}  // namespace

bool HookAbsentAt(std::string_view dpkg_log, int64_t when) {
  // dpkg.log lines: "DATE TIME install PKG:ARCH <none> VERSION", "... upgrade PKG:ARCH OLD NEW",
  // "... remove PKG:ARCH VERSION <none>", "... purge ...". The hook ships in nvidia-container-toolkit.
  std::optional<bool> present_then;  // from the last event at or before `when`
  std::optional<bool> first_after;   // the state before the first event after `when`
  for (const auto& line : Split(dpkg_log, '\n')) {
    auto w = SplitWords(line);
    if (w.size() < 6) continue;
    const std::string_view pkg = std::string_view(w[3]).substr(0, w[3].find(':'));
    if (pkg != kHookPackage) continue;
    const std::string& action = w[2];
    bool after;
    if (action == "install" || action == "upgrade")
      after = true;
    else if (action == "remove" || action == "purge")
      after = false;
    else
      continue;
    auto t = LogTime(w[0], w[1]);
    if (!t) continue;
    if (*t <= when) {
      present_then = after;
    } else if (!first_after) {
      // Before this event: absent if it installs from nothing, present if it upgrades or removes.
      first_after = !(action == "install" && w[4] == "<none>");
    }
  }
  if (present_then) return !*present_then;
  if (first_after) return !*first_after;
  return false;  // no event of it in the log: installed long before, as far as anything says
}

std::optional<std::string> ParseCtkVersion(std::string_view text) {
  // First line: "NVIDIA Container Toolkit CLI version 1.17.8"
  std::string_view first = text.substr(0, text.find('\n'));
  auto at = first.find(" version ");
  if (at == std::string_view::npos) return std::nullopt;
  auto words = SplitWords(first.substr(at + 9));
  if (words.empty() || !Version::Parse(words[0])) return std::nullopt;
  return words[0];
}

DaemonJson ParseDaemonJson(std::string_view text) {
  DaemonJson r;
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    std::string what = e.what();
    auto close = what.find("] ");
    r.error = close == std::string::npos ? what : what.substr(close + 2);
    return r;
  }
  if (!j.is_object()) {
    r.error = "not a JSON object";
    return r;
  }
  r.runtimes = Keys(j, "runtimes");
  if (auto it = j.find("default-runtime"); it != j.end() && it->is_string())
    r.default_runtime = it->get<std::string>();
  r.cdi_spec_dirs = StringList(j, "cdi-spec-dirs");
  if (auto f = j.find("features"); f != j.end() && f->is_object()) {
    if (auto c = f->find("cdi"); c != f->end() && c->is_boolean()) r.cdi_feature = c->get<bool>();
  }
  return r;
}

std::optional<std::string> ParseDockerVersionBody(std::string_view body, std::string* api_version) {
  auto j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  if (api_version) {
    auto a = j.find("ApiVersion");
    *api_version = a != j.end() && a->is_string() ? a->get<std::string>() : "";
    if (api_version->empty() || api_version->size() > 16 ||
        api_version->find_first_not_of("0123456789.") != std::string::npos)
      api_version->clear();
  }
  auto it = j.find("Version");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

DockerInfoBody ParseDockerInfoBody(std::string_view body) {
  DockerInfoBody r;
  auto j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return r;
  r.ok = true;
  r.runtimes = Keys(j, "Runtimes");
  if (auto it = j.find("DefaultRuntime"); it != j.end() && it->is_string())
    r.default_runtime = it->get<std::string>();
  r.cdi_spec_dirs = StringList(j, "CDISpecDirs");
  if (auto it = j.find("ContainersRunning"); it != j.end() && it->is_number_integer())
    r.containers_running = it->get<int>();
  if (auto it = j.find("DiscoveredDevices"); it != j.end() && it->is_array()) {
    for (const auto& dev : *it) {
      if (!dev.is_object()) continue;
      auto src = dev.find("Source");
      auto id = dev.find("ID");
      if (src != dev.end() && src->is_string() && src->get<std::string>() == "cdi" && id != dev.end() &&
          id->is_string()) {
        r.cdi_devices.push_back(id->get<std::string>());
      }
    }
  }
  return r;
}

void ProbeDocker(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  DockerInfo& d = facts.docker;
  ProbeToolkit(env, facts);
  d.cli_found = !FindProgram(env, "docker").empty();

  std::vector<std::string> cdi_dirs = {"/etc/cdi", VarRun(fs, "/cdi")};
  DaemonJson daemon;
  if (auto text = fs.Read("/etc/docker/daemon.json")) {
    daemon = ParseDaemonJson(*text);
    d.daemon_json_error = daemon.error;
    // A link to another file (a system file, perhaps): nothing of that file is quoted.
    if (!daemon.error.empty() && fs.ReadLink("/etc/docker/daemon.json"))
      d.daemon_json_error = "a symbolic link to a file that is not a JSON object";
    d.daemon_json_runtimes = daemon.runtimes;
    for (const auto& dir : daemon.cdi_spec_dirs) cdi_dirs.push_back(dir);
  }
  ProbeEngine(env, d, cdi_dirs);
  if (!d.engine_reachable) {
    // The engine was not asked (--root, or not running): its configured default runtime stands in;
    // `runtimes` stays the engine's own answer (empty), daemon_json_runtimes says what is configured.
    d.default_runtime = daemon.default_runtime;
  }

  bool nvidia_spec = ScanCdiSpecs(fs, cdi_dirs, d.cdi_devices);
  if (d.engine_reachable) {
    d.cdi = d.cdi && nvidia_spec;
  } else {
    // Engine not asked: CDI is on by default from Docker 28.3.0, or when daemon.json enables the feature.
    bool enabled = daemon.cdi_feature.value_or(false);
    if (!daemon.cdi_feature) {
      if (const auto* p = FindPackage(facts, "docker-ce")) {
        auto v = UpstreamRelease(p->version);  // "5:28.3.2-1~ubuntu.22.04~jammy" -> 28.3.2
        enabled = v && *v >= Version::Must("28.3.0");
      }
    }
    d.cdi = enabled && nvidia_spec;
  }
}

}  // namespace gp::probe
