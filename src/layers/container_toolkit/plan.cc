// container_toolkit's plan: NVIDIA's four toolkit packages at one version (pinned and held through the
// transaction), the experimental channel turned off before apt reads its lists, the runtime's mode, the CDI
// spec, and the NVIDIA runtime registered in daemon.json (every other key kept) with Docker reloaded or
// restarted, when an engine will be there.
#include <nlohmann/json.hpp>

#include "docker/daemon_json.h"
#include "layers/container_toolkit/container_toolkit.h"
#include "layers/docker/docker.h"
#include "plan/containers.h"
#include "probe/parsers.h"
#include "probe/state.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::layers {
namespace {

using plan::Action;
using plan::LayerPlan;
using Kind = plan::LayerDecision::Kind;
constexpr const char* kName = "container_toolkit";
constexpr const char* kRuntimeConfig = "/etc/nvidia-container-runtime/config.toml";
constexpr const char* kSourcesList = "/etc/apt/sources.list";
constexpr const char* kSourcesListDir = "/etc/apt/sources.list.d";

// apt's list files as the host has them (sources.list, then sources.list.d/*.list), from the declared files.
std::map<std::string, std::optional<std::string>> AptListFiles(const plan::HostState& host) {
  std::map<std::string, std::optional<std::string>> out;
  for (const auto& [path, text] : host.files)
    if (path == kSourcesList ||
        (StartsWith(path, std::string(kSourcesListDir) + "/") && EndsWith(path, ".list")))
      out[path] = text;
  return out;
}

bool HasNvidiaCdiSpec(const probe::DockerInfo& d) {
  for (const auto& dev : d.cdi_devices)
    if (StartsWith(dev, "nvidia.com/gpu=")) return true;
  return false;
}

// Whether the hook's package (probe::kHookPackage) is not installed yet: an engine already running, or
// started by its own package before the hook was unpacked, answers `could not select device driver "" with
// capabilities: [[gpu]]` until it restarts; a reload does not look again.
bool HookIsNew(const plan::LayerContext& ctx) {
  if (ctx.stack->docker.gpu_access == "cdi") return false;  // CDI devices need no hook
  auto it = ctx.packages.state->dpkg.find(probe::kHookPackage);
  return it == ctx.packages.state->dpkg.end() || !it->second.installed;
}

// Errors name the file gpuprep would replace, as this machine sees it (under --root, a link followed). When
// daemon.json is a link to a file that is not a JSON object (another system file), they name daemon.json and
// quote nothing of the file linked to. Throws FileError: exit 2.
docker::DaemonJsonEdit EditDaemonJson(const plan::HostState& host, const docker::DaemonJsonWant& want) {
  const bool object = !host.daemon_json || Trim(*host.daemon_json).empty() || [&] {
    const auto doc = nlohmann::json::parse(*host.daemon_json, nullptr, false);
    return !doc.is_discarded() && doc.is_object();
  }();
  if (host.daemon_json_link_shown.empty() || object)
    return docker::EditDaemonJson(host.daemon_json, want, host.daemon_json_shown);
  throw FileError(
      host.daemon_json_link_shown, 1, 1,
      "a symbolic link to a file that is not Docker's configuration (a JSON object); gpuprep quotes "
      "nothing of that file and leaves both as they are: link daemon.json to Docker's "
      "configuration, or put the file itself at " +
          std::string(docker::kDaemonJsonPath));
}

// daemon.json edited losslessly for the stack's runtime (and CDI), then Docker reloaded, or restarted when
// a changed key is read only at start or the toolkit's hook is new (refused while containers run, unless
// --restart-docker).
void DaemonJson(const plan::LayerContext& ctx, const EngineReady& engine, LayerPlan& out,
                std::vector<std::string>& parts) {
  const probe::DockerInfo& d = ctx.facts->docker;
  docker::DaemonJsonWant want;
  want.default_runtime = ctx.stack->docker.default_runtime;
  if (ctx.stack->docker.gpu_access == "cdi") want.cdi = true;
  const docker::DaemonJsonEdit edit = EditDaemonJson(*ctx.host, want);
  const bool running = d.engine_reachable || engine.installs;
  const bool hook_new = running && HookIsNew(ctx);
  const bool hook_unseen =
      d.engine_reachable && d.started_before_hook && ctx.stack->docker.gpu_access != "cdi";
  if (!edit.changed && !hook_new && !hook_unseen) return;
  if (edit.changed) {
    parts.push_back("daemon.json: " + Join(edit.changes, ", "));
    out.last.push_back(plan::MakeStep("docker.daemon-json", {kName},
                                      "register the NVIDIA runtime in " +
                                          std::string(docker::kDaemonJsonPath) + " (every other key kept)"));
    Action w = Action::Write(docker::kDaemonJsonPath, edit.text, 0644, true);
    w.diff = edit.diff;
    out.last.back().actions.push_back(w);
  }
  if (!running) return;  // a stopped engine reads it when it starts
  if (edit.restart_required || hook_new || hook_unseen) {
    std::vector<std::string> why;
    if (edit.restart_required) why.push_back(Join(edit.changes, ", ") + " is read only at start");
    if (hook_new) {
      why.push_back("the toolkit's hook is new: Docker finds it only at start, for --gpus");
      if (!edit.changed) parts.push_back("Docker restarts to find the toolkit's hook");
    } else if (hook_unseen) {
      why.push_back(
          "it started before the toolkit's hook was installed and finds it only at start, for --gpus");
      if (!edit.changed) parts.push_back("Docker started before the toolkit's hook");
    }
    if (d.containers_running > 0 && !ctx.in->restart_docker) {
      out.blockers.push_back(
          "Docker must restart (" + Join(why, "; ") + "), which would stop " +
          std::to_string(d.containers_running) +
          " running container(s); run apply with --restart-docker to allow it, or stop them first");
    }
    out.last.push_back(plan::MakeStep("docker.restart", {kName}, "restart Docker (" + Join(why, "; ") + ")"));
    out.last.back().actions.push_back(Action::Run({"systemctl", "restart", plan::kDockerUnit}));
  } else {
    out.last.push_back(plan::MakeStep("docker.reload", {kName}, "reload Docker's configuration (SIGHUP)"));
    out.last.back().actions.push_back(Action::Run({"systemctl", "reload", plan::kDockerUnit}));
  }
}

// The experimental channel is off: gpuprep's list names only stable/; an active experimental line
// elsewhere is moved aside before apt reads the lists.
void ToolkitExperimentalStep(const plan::LayerContext& ctx, LayerPlan& out, std::vector<std::string>& parts) {
  const std::vector<std::string> experimental = probe::ExperimentalToolkitLists(AptListFiles(*ctx.host));
  if (experimental.empty()) return;
  out.first.push_back(plan::MakeStep("container_toolkit.experimental", {kName},
                                     "turn NVIDIA's experimental toolkit channel off"));
  for (const auto& path : experimental)
    out.first.back().actions.push_back(Action::Move(path, path + ".gpuprep.bak"));
  parts.push_back("experimental channel on in " + Join(experimental, ", "));
}

// The NVIDIA runtime's mode set to the stack's, when it names one the runtime's config does not have.
void ToolkitModeStep(const plan::LayerContext& ctx, LayerPlan& out, std::vector<std::string>& parts) {
  const std::string& mode = ctx.stack->docker.toolkit_mode;
  const std::optional<std::string> config = ctx.host->File(kRuntimeConfig);
  const std::string mode_now = config ? probe::ParseToolkitRuntimeMode(*config) : "";
  if (mode.empty() || mode_now == mode) return;
  out.last.push_back(
      plan::MakeStep("container_toolkit.mode", {kName}, "set the NVIDIA runtime's mode to " + mode));
  out.last.back().actions.push_back(
      Action::Run({"nvidia-ctk", "config", "--in-place", "--set", "nvidia-container-runtime.mode=" + mode}));
  parts.push_back("runtime mode " + (mode_now.empty() ? "unset" : mode_now) + ", wanted " + mode);
}

// With GPU access through CDI, the spec for the GPUs generated when Docker sees none.
void ToolkitCdiStep(const plan::LayerContext& ctx, LayerPlan& out, std::vector<std::string>& parts) {
  if (ctx.stack->docker.gpu_access != "cdi" || HasNvidiaCdiSpec(ctx.facts->docker)) return;
  // From 1.18 nvidia-cdi-refresh keeps /var/run/cdi/nvidia.yaml; a second spec in /etc/cdi would define
  // every device twice.
  const bool refresh = *ctx.stack->container_toolkit.version.version >= Version::Must("1.18.0");
  const std::string spec = refresh ? "/var/run/cdi/nvidia.yaml" : "/etc/cdi/nvidia.yaml";
  out.last.push_back(plan::MakeStep("container_toolkit.cdi", {kName}, "generate the CDI spec for the GPUs"));
  out.last.back().actions.push_back(Action::Run({"nvidia-ctk", "cdi", "generate", "--output=" + spec}));
  parts.push_back("no CDI spec for nvidia.com/gpu");
}

// The upstream version of the first of the stack's toolkit packages that is installed; "" when none is.
std::string ToolkitFound(const plan::LayerContext& ctx) {
  for (const auto& p : ctx.stack->container_toolkit.packages) {
    auto it = ctx.packages.state->dpkg.find(p.name);
    if (it != ctx.packages.state->dpkg.end() && it->second.installed)
      return DebVersion::Parse(it->second.version).upstream;
  }
  return "";
}

}  // namespace

LayerPlan PlanContainerToolkit(const plan::LayerContext& ctx) {
  const manifest::ComponentSpec& c = ctx.stack->container_toolkit;
  if (!c.enabled) return plan::Decided(kName, Kind::kNotApplicable, "not part of stack " + ctx.stack->name);
  if (!ctx.Selected(kName)) return plan::Decided(kName, Kind::kSkipped, "not selected");
  if (!c.version.known())
    return plan::Decided(kName, Kind::kRefused,
                         "the stack's version is unknown (" + c.version.reason +
                             "); pin one or run with --skip container_toolkit");
  if (c.packages.empty())
    return plan::Decided(
        kName, Kind::kRefused,
        "the stack names no toolkit packages; add them or run with --skip container_toolkit");
  LayerPlan out;
  std::vector<std::string> parts;
  out.packages =
      plan::DecideContainerPackages(ctx.packages, kName, c.packages, c.version.version->str(), out.by_name);
  if (!out.packages.error.empty()) {
    out.decision = plan::Decided(kName, Kind::kRefused, out.packages.error).decision;
    return out;
  }
  if (!out.packages.detail.empty()) parts.push_back(out.packages.detail);
  ToolkitExperimentalStep(ctx, out, parts);
  ToolkitModeStep(ctx, out, parts);
  ToolkitCdiStep(ctx, out, parts);
  const EngineReady engine = EngineFor(ctx);
  if (engine.ready) DaemonJson(ctx, engine, out, parts);
  out.decision =
      plan::Decided(kName, parts.empty() ? Kind::kNone : Kind::kInstall,
                    parts.empty() ? "installed, held and registered with Docker" : Join(parts, "; "))
          .decision;
  out.decision.wanted = c.version.version->str();
  out.decision.found = ToolkitFound(ctx);
  out.in_transaction = out.decision.kind == Kind::kInstall;
  return out;
}

void ContainerToolkitReads(const manifest::Stack&, const probe::HostFacts&, host::Reads& out) {
  out.files.push_back(kRuntimeConfig);
  out.files.push_back(kSourcesList);
  out.dirs.emplace_back(kSourcesListDir, ".list");
}

}  // namespace gp::layers
