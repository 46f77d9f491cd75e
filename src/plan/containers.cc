#include "plan/containers.h"

#include <algorithm>

#include "apt/commands.h"
#include "apt/dpkg_status.h"
#include "docker/daemon_json.h"
#include "docker/image_ref.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::plan {
namespace {

using Kind = LayerDecision::Kind;

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A Docker version as the engine or dpkg gives it: "28.3.2", "5:28.3.2-1~ubuntu.22.04~jammy",
// "24.0.7-0ubuntu2".
std::optional<Version> DockerVersion(const std::string& text) {
  std::string up = text.find(':') != std::string::npos || text.find('-') != std::string::npos
                       ? DebVersion::Parse(text).upstream
                       : text;
  up = up.substr(0, up.find_first_of("-~+"));
  return Version::Parse(up);
}

class ContainerPlanner {
 public:
  ContainerPlanner(const PlanInput& in, const PackageState& state, const ResolvePackages& resolve)
      : in_(in), resolve_(resolve), stack_(*in.stack), fs_(*in.fs), d_(in.facts->docker), dpkg_(state.dpkg) {}

  ContainerPlan Build() {
    Docker();
    Toolkit();
    Image();
    return std::move(out_);
  }

 private:
  bool Selected(const std::string& layer) const {
    return (in_.only.empty() || Has(in_.only, layer)) && !Has(in_.skip, layer);
  }
  LayerDecision& Add(const std::string& name, Kind kind, std::string detail) {
    out_.layers.push_back(LayerDecision{name, kind, "", "", std::move(detail)});
    return out_.layers.back();
  }
  Step& NewStep(std::vector<Step>& where, std::string id, std::string layer, std::string title) {
    where.push_back(Step{std::move(id), {std::move(layer)}, std::move(title), {}});
    return where.back();
  }
  // Pinned packages (a version or upstream) through the resolver; unpinned ones (the distribution's
  // docker.io) by name. Returns the detail ("" when nothing is missing); `error` when a pin cannot be served.
  std::string Packages(const std::string& layer, const std::vector<manifest::AptPackage>& pkgs,
                       const std::string& upstream, std::string& error) {
    std::vector<manifest::AptPackage> pinned;
    std::vector<std::string> missing;
    for (const auto& p : pkgs) {
      if (!p.version.empty() || !p.upstream.empty() || !upstream.empty()) {
        pinned.push_back(p);
        continue;
      }
      auto it = dpkg_.find(p.name);
      if (it != dpkg_.end() && it->second.installed) continue;
      out_.install.push_back(p);
      missing.push_back(p.name);
    }
    std::vector<std::string> parts;
    if (!missing.empty()) parts.push_back("missing: " + Join(missing, ", "));
    if (!pinned.empty())
      if (auto d = resolve_(layer, pinned, upstream, error); !d.empty()) parts.push_back(d);
    return Join(parts, "; ");
  }
  std::string InstalledEngine() const {
    for (const char* n : {"docker-ce", "docker.io", "moby-engine"}) {
      auto it = dpkg_.find(n);
      if (it != dpkg_.end() && it->second.installed) return it->second.version;
    }
    return "";
  }

  void Docker() {
    const auto& spec = stack_.docker;
    const std::string pkg_version = InstalledEngine();
    // An engine: one that answers, or an engine package. A docker CLI alone (docker-ce-cli, a static
    // binary) has nothing to run containers with.
    const bool present = d_.engine_reachable || !pkg_version.empty();
    if (!Selected("docker")) {
      docker_ready_ = present;
      return void(Add("docker", Kind::kSkipped, "not selected"));
    }
    if (present) {
      docker_ready_ = true;
      const std::string text = d_.engine_reachable && !d_.version.empty() ? d_.version : pkg_version;
      LayerDecision& l = Add("docker", Kind::kNone, "");
      l.found = text.empty() ? "installed" : text;
      l.wanted = spec.gpu_access == "cdi" ? ">= 25 (CDI)" : ">= 19.03 (--gpus)";
      auto v = DockerVersion(text);
      // --gpus exists from Docker 19.03; Docker's CDI support (and nvidia-ctk's --cdi.enabled) needs 25.
      const char* floor = spec.gpu_access == "cdi" ? "25.0" : "19.03";
      if (v && *v < Version::Must(floor)) {
        l.kind = Kind::kRefused;
        l.detail =
            "Docker " + v->str() + " is installed, older than " + floor +
            (spec.gpu_access == "cdi" ? " (CDI devices need Docker 25)" : " (--gpus needs Docker 19.03)") +
            "; gpuprep leaves an existing engine alone: upgrade it, then run apply again";
        docker_ready_ = false;
        return;
      }
      l.detail = "Docker " + (text.empty() ? std::string("is installed") : text + " is installed") +
                 (d_.engine_reachable ? " and answers" : "") + "; an existing engine is left as it is";
      return;
    }
    if (!spec.present)
      return void(Add("docker", Kind::kNotApplicable,
                      "Docker is not installed and stack " + stack_.name +
                          " does not set it up (add a docker: section with engine: docker.io or docker-ce)"));
    std::string error;
    std::string detail = Packages("docker", spec.packages, "", error);
    if (!error.empty()) return void(Add("docker", Kind::kRefused, error));
    docker_ready_ = true;
    docker_installs_ = true;
    LayerDecision& l = Add("docker", Kind::kInstall,
                           (detail.empty() ? "" : detail + "; ") + "then enable and start " + kDockerUnit);
    l.wanted = spec.engine;
    NewStep(out_.after, "docker.enable", "docker", "enable and start the Docker engine")
        .actions.push_back(Action::Run({"systemctl", "enable", "--now", kDockerUnit}));
  }

  void Toolkit() {
    const auto& c = stack_.container_toolkit;
    if (!c.enabled)
      return void(Add("container_toolkit", Kind::kNotApplicable, "not part of stack " + stack_.name));
    if (!Selected("container_toolkit")) return void(Add("container_toolkit", Kind::kSkipped, "not selected"));
    if (!c.version.known())
      return void(Add("container_toolkit", Kind::kRefused,
                      "the stack's version is unknown (" + c.version.reason +
                          "); pin one or run with --skip container_toolkit"));
    if (c.packages.empty())
      return void(Add("container_toolkit", Kind::kRefused,
                      "the stack names no toolkit packages; add them or run with --skip container_toolkit"));
    std::vector<std::string> parts;
    std::string error;
    if (auto p = Packages("container_toolkit", c.packages, c.version.version->str(), error); !p.empty())
      parts.push_back(p);
    if (!error.empty()) return void(Add("container_toolkit", Kind::kRefused, error));
    // The experimental channel is off: gpuprep's list names only stable/; an active experimental line
    // elsewhere is moved aside before apt reads the lists.
    auto experimental = ExperimentalToolkitLists(fs_);
    if (!experimental.empty()) {
      Step& s = NewStep(out_.before, "container_toolkit.experimental", "container_toolkit",
                        "turn NVIDIA's experimental toolkit channel off");
      for (const auto& path : experimental) s.actions.push_back(Action::Move(path, path + ".gpuprep.bak"));
      parts.push_back("experimental channel on in " + Join(experimental, ", "));
    }
    const std::string& mode = stack_.docker.toolkit_mode;
    if (!mode.empty() && ToolkitRuntimeMode(fs_) != mode) {
      NewStep(out_.after, "container_toolkit.mode", "container_toolkit",
              "set the NVIDIA runtime's mode to " + mode)
          .actions.push_back(Action::Run(
              {"nvidia-ctk", "config", "--in-place", "--set", "nvidia-container-runtime.mode=" + mode}));
      parts.push_back("runtime mode " +
                      (ToolkitRuntimeMode(fs_).empty() ? "unset" : ToolkitRuntimeMode(fs_)) + ", wanted " +
                      mode);
    }
    if (stack_.docker.gpu_access == "cdi" && !HasNvidiaCdiSpec()) {
      // From 1.18 nvidia-cdi-refresh keeps /var/run/cdi/nvidia.yaml; a second spec in /etc/cdi would define
      // every device twice.
      const bool refresh = c.version.known() && *c.version.version >= Version::Must("1.18.0");
      const std::string out = refresh ? "/var/run/cdi/nvidia.yaml" : "/etc/cdi/nvidia.yaml";
      NewStep(out_.after, "container_toolkit.cdi", "container_toolkit", "generate the CDI spec for the GPUs")
          .actions.push_back(Action::Run({"nvidia-ctk", "cdi", "generate", "--output=" + out}));
      parts.push_back("no CDI spec for nvidia.com/gpu");
    }
    if (docker_ready_) DaemonJson(parts);
    LayerDecision& l = Add("container_toolkit", parts.empty() ? Kind::kNone : Kind::kInstall,
                           parts.empty() ? "installed, held and registered with Docker" : Join(parts, "; "));
    l.wanted = c.version.known() ? c.version.version->str() : "";
    for (const auto& p : c.packages) {
      auto it = dpkg_.find(p.name);
      if (it != dpkg_.end() && it->second.installed) {
        l.found = DebVersion::Parse(it->second.version).upstream;
        break;
      }
    }
  }

  bool HasNvidiaCdiSpec() const {
    for (const auto& dev : d_.cdi_devices)
      if (StartsWith(dev, "nvidia.com/gpu=")) return true;
    return false;
  }

  void DaemonJson(std::vector<std::string>& parts) {
    docker::DaemonJsonWant want;
    want.default_runtime = stack_.docker.default_runtime;
    if (stack_.docker.gpu_access == "cdi") want.cdi = true;
    // Errors name the file gpuprep would replace, as this machine sees it (under --root, a link followed).
    const sys::WriteTarget target = sys::ResolveWriteTarget(fs_, docker::kDaemonJsonPath);
    const std::string shown = fs_.HostPath(target.error.empty() ? target.path : docker::kDaemonJsonPath);
    auto edit =
        docker::EditDaemonJson(fs_.Read(docker::kDaemonJsonPath), want, shown);  // throws FileError: exit 2
    if (!edit.changed) return;
    parts.push_back("daemon.json: " + Join(edit.changes, ", "));
    Step& s = NewStep(
        out_.after, "docker.daemon-json", "container_toolkit",
        "register the NVIDIA runtime in " + std::string(docker::kDaemonJsonPath) + " (every other key kept)");
    Action w = Action::Write(docker::kDaemonJsonPath, edit.text, 0644, true);
    w.diff = edit.diff;
    s.actions.push_back(w);
    if (!d_.engine_reachable && !docker_installs_) return;  // a stopped engine reads it when it starts
    if (edit.restart_required) {
      if (d_.containers_running > 0 && !in_.restart_docker) {
        out_.blockers.push_back(
            "Docker must restart to take " + Join(edit.changes, ", ") + ", which would stop " +
            std::to_string(d_.containers_running) +
            " running container(s); run apply with --restart-docker to allow it, or stop them first");
      }
      NewStep(out_.after, "docker.restart", "container_toolkit",
              "restart Docker (" + Join(edit.changes, ", ") + " is read only at start)")
          .actions.push_back(Action::Run({"systemctl", "restart", kDockerUnit}));
    } else {
      NewStep(out_.after, "docker.reload", "container_toolkit", "reload Docker's configuration (SIGHUP)")
          .actions.push_back(Action::Run({"systemctl", "reload", kDockerUnit}));
    }
  }

  void Image() {
    const auto& img = stack_.image;
    if (img.ref.empty())
      return void(Add("image", Kind::kNotApplicable, "stack " + stack_.name + " names no image"));
    if (!Selected("image")) return void(Add("image", Kind::kSkipped, "not selected"));
    const std::string pull = docker::ImagePullReference(img.ref, img.digest, img.mirror);
    if (pull.empty())
      return void(Add("image", Kind::kRefused, "\"" + img.ref + "\" is not an image reference"));
    if (!docker_ready_)
      return void(Add("image", stack_.docker.present ? Kind::kSkipped : Kind::kNotApplicable,
                      "no Docker engine to pull " + pull + " into (see the docker layer)"));
    const probe::ImageInfo& have = d_.image;
    const bool same_ref = have.ref == pull;
    if (same_ref && have.present && (img.digest.empty() || have.digest == img.digest)) {
      LayerDecision& l = Add("image", Kind::kNone, "pulled");
      l.found = have.digest;
      l.wanted = pull;
      return;
    }
    std::string why = same_ref && have.present ? "pulled at " + have.digest + ", the stack pins " + img.digest
                                               : "not pulled";
    LayerDecision& l = Add("image", Kind::kInstall, why);
    l.wanted = pull;
    l.found = same_ref && have.present ? have.digest : "";
    Action a;
    a.kind = Action::Kind::kPull;
    a.image = pull;
    a.digest = img.digest;
    a.timeout = std::chrono::seconds(3600);
    NewStep(out_.after, "image.pull", "image", "pull " + pull + " through the Docker Engine API")
        .actions.push_back(a);
  }

  const PlanInput& in_;
  const ResolvePackages& resolve_;
  const manifest::Stack& stack_;
  const sys::Fs& fs_;
  const probe::DockerInfo& d_;
  const std::map<std::string, apt::DpkgEntry>& dpkg_;  // the status file's entries (plan/packages.h)
  ContainerPlan out_;
  bool docker_ready_ = false, docker_installs_ = false;
};

}  // namespace

std::vector<std::string> ExperimentalToolkitLists(const sys::Fs& fs) {
  std::vector<std::string> files = {"/etc/apt/sources.list"};
  for (const auto& name : fs.List("/etc/apt/sources.list.d"))
    if (EndsWith(name, ".list")) files.push_back("/etc/apt/sources.list.d/" + name);
  std::vector<std::string> out;
  for (const auto& path : files) {
    auto text = fs.Read(path);
    if (!text) continue;
    for (const auto& line : Split(*text, '\n')) {
      std::string_view l = Trim(line);
      if (!l.empty() && l[0] != '#' && l.find("libnvidia-container/experimental") != std::string_view::npos) {
        out.push_back(path);
        break;
      }
    }
  }
  return out;
}

std::string ToolkitRuntimeMode(const sys::Fs& fs) {
  auto text = fs.Read("/etc/nvidia-container-runtime/config.toml");
  if (!text) return "";
  bool in_section = false;
  for (const auto& raw : Split(*text, '\n')) {
    std::string line(Trim(raw));
    if (StartsWith(line, "[")) {
      in_section = line == "[nvidia-container-runtime]";
      continue;
    }
    if (!in_section || !StartsWith(line, "mode")) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line.substr(0, eq)) != "mode") continue;
    std::string v(Trim(line.substr(eq + 1)));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

ContainerPlan PlanContainers(const PlanInput& in, const PackageState& state, const ResolvePackages& resolve) {
  return ContainerPlanner(in, state, resolve).Build();
}

}  // namespace gp::plan
