#include "plan/planner.h"

#include <algorithm>
#include <set>

#include "apt/availability.h"
#include "apt/dpkg_status.h"
#include "apt/preferences.h"
#include "apt/resolve.h"
#include "apt/sources.h"
#include "layers/table.h"
#include "manifest/digest.h"
#include "manifest/loader.h"
#include "plan/containers.h"
#include "plan/host_state.h"
#include "plan/pins.h"
#include "redist/error.h"
#include "redist/state.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::plan {

const std::vector<std::string>& ApplyLayers() { return layers::InstallableLayerNames(); }

std::vector<std::string> ParseLayerList(const std::string& flag, const std::vector<std::string>& items) {
  const auto& known = ApplyLayers();
  std::vector<std::string> out;
  for (const auto& item : items) {
    for (const auto& raw : Split(item, ',')) {
      std::string name(Trim(raw));
      if (name.empty()) continue;
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        if (layers::FindLayer(name))  // os, host, gpu: doctor checks them, nothing installs them
          throw FlagError(flag, "layer \"" + name + "\" is checked by doctor but installs nothing (layers: " +
                                    Join(known, ", ") + ")");
        if (auto guess = DidYouMean(name, known))
          throw FlagError(flag, "unknown layer \"" + name + "\" (did you mean \"" + *guess + "\"?)");
        throw FlagError(flag, "unknown layer \"" + name + "\" (layers: " + Join(known, ", ") + ")");
      }
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

namespace {

using Kind = LayerDecision::Kind;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// https, plain http only to a loopback host (decided on the parsed host, never a prefix), or a local
// file:/// mirror.
bool UrlAllowed(const std::string& url) {
  if (CheckUrl(url, UrlRule::kFetch).empty()) return true;
  auto u = ParseUrl(url);
  return u && u->scheme == "file";
}

class Planner {
 public:
  explicit Planner(const PlanInput& in) : in_(in), stack_(*in.stack), facts_(*in.facts), fs_(*in.fs) {}

  Plan Build() {
    plan_.stack = stack_.name;
    plan_.manifest = in_.manifest;
    ReadPackageState();
    Driver();
    FabricManager();
    Component("cuda", stack_.cuda);
    Component("cudnn", stack_.cudnn);
    Component("nccl", stack_.nccl);
    Containers();
    KeepEnginePins();
    Pins();
    // All or nothing: a selected layer that cannot be installed stops apply before its first change.
    for (const auto& l : plan_.layers)
      if (l.kind == Kind::kRefused && !blocked_layers_.count(l.name))
        plan_.blockers.push_back(l.name + ": " + l.detail + " (to leave the layer out: --skip " + l.name +
                                 ")");
    for (const auto& l : plan_.layers)
      if (l.kind == Kind::kSkipped && !Selected(l.name)) plan_.left_alone.push_back(l.name);
    Steps();
    plan_.reboot = driver_ok_ && driver_installs_;
    if (in_.from &&
        in_.from->name != stack_.name) {  // a move from the host's recorded stack: what it changes
      plan_.move_from = in_.from->name;
      for (const auto& c : manifest::PinChanges(*in_.from, stack_))
        plan_.move_changes.push_back({c.field, c.from, c.to});
    }
    WriteThroughLinks();
    return std::move(plan_);
  }

 private:
  bool Selected(const std::string& layer) const {
    return (in_.only.empty() || Contains(in_.only, layer)) && !Contains(in_.skip, layer);
  }

  LayerDecision& Add(const std::string& name, Kind kind, std::string detail) {
    LayerDecision d;
    d.name = name;
    d.kind = kind;
    d.detail = std::move(detail);
    plan_.layers.push_back(d);
    return plan_.layers.back();
  }

  // The dpkg database (every installed package: the closure walk needs the components too), the
  // repositories' index (given by apply's preflight, or the host's apt lists) and gpuprep's own pins.
  void ReadPackageState() {
    const std::string status = fs_.Read("/var/lib/dpkg/status").value_or("");
    apt::Index installed;
    apt::ParsePackages(status, "", installed, true);
    std::set<std::string> names;
    for (const auto& name : installed.Names()) {
      installed_[name] = installed.Find(name)->front().version;
      names.insert(name);
    }
    held_ = apt::ParseDpkgStatus(status, names);  // once, not once per package asked about
    status_text_ = status;
    arch_ = apt::DpkgArch(facts_.arch);
    if (in_.index) {
      index_ = in_.index;
      plan_.resolved_from = "the repositories' index fetched by apply";
    } else {
      auto repos = AptRepositories();
      host_index_ = apt::ReadRepoIndex(fs_, repos, arch_);
      if (host_index_.complete) {
        index_ = &host_index_.index;
        plan_.resolved_from = "the host's apt lists";
      }
    }
    if (auto text = fs_.Read(apt::kPreferencesPath)) {
      prefs_text_ = *text;
      old_pins_ = apt::ReadPins(*text);
    }
  }

  // The stack's repositories that serve the layers apply installs here.
  std::vector<const manifest::AptRepository*> AptRepositories() const {
    return AptRepositoriesFor(stack_, facts_);
  }

  std::string CudaMajorMinor() const {
    return stack_.cuda.version.known() ? stack_.cuda.version.version->Prefix(2).str() : "";
  }

  // cuDNN and NCCL packages may name the CUDA build in their revision
  // (8.9.7.29-1+cuda12.2, 2.27.7-1+cuda13.0).
  apt::PinRule Rule(const manifest::AptPackage& p, const std::string& layer_version, bool cuda_builds) const {
    apt::PinRule r;
    r.name = p.name;
    r.exact = p.version;
    r.upstream = p.upstream.empty() ? layer_version : p.upstream;
    if (cuda_builds) r.cuda = CudaMajorMinor();
    return r;
  }

  const std::string* InstalledVersion(const std::string& name) const {
    auto it = installed_.find(name);
    return it == installed_.end() ? nullptr : &it->second;
  }

  // Decides each package of a layer: installed at the pin (kept), or to install at the version resolved
  // from the index. Returns the layer's detail ("" when nothing is missing); `error` is set when the
  // index cannot serve a pin (the layer is refused).
  std::string Packages(const std::string& layer, const std::vector<manifest::AptPackage>& pkgs,
                       const std::string& layer_version, std::string& error, bool cuda_builds = false) {
    std::vector<std::string> missing, unheld;
    for (const auto& p : pkgs) {
      const apt::PinRule rule = Rule(p, layer_version, cuda_builds);
      const std::string* have = InstalledVersion(p.name);
      if (have && apt::MatchesPin(*have, rule)) {
        roots_.push_back({layer, p.name, *have});
        if (!IsHeld(p.name)) unheld.push_back(p.name);
        continue;
      }
      if (index_) {
        auto res = apt::ResolvePin(*index_, rule);
        if (!res.ok()) {
          error = res.error;
          return "";
        }
        roots_.push_back({layer, p.name, res.version});
        install_.push_back(p.name + "=" + res.version);
        missing.push_back(p.name + "=" + res.version);
      } else {
        plan_.needs_index = true;
        if (!rule.exact.empty()) {
          install_.push_back(p.name + "=" + rule.exact);
          missing.push_back(p.name + "=" + rule.exact);
        } else {
          const std::string word = p.name + "=" + rule.upstream + "-*";
          install_.push_back(word);
          missing.push_back(rule.str());
        }
      }
      if (have && IsHeld(p.name)) allow_held_ = true;
    }
    std::vector<std::string> parts;
    if (!missing.empty()) parts.push_back("missing: " + Join(missing, ", "));
    if (!unheld.empty()) parts.push_back("not held: " + Join(unheld, ", "));
    return Join(parts, "; ");
  }

  bool IsHeld(const std::string& name) const {  // an installed package
    auto it = held_.find(name);
    return it != held_.end() && it->second.held;
  }

  // Every package the selected layers install or keep, at exact versions (the closure through the index),
  // each naming the layers that need it; then the pins of the layers this run leaves alone, kept as they
  // are (plan/pins.h); then what must change so that each of the run's packages is pinned and held.
  void Pins() {
    if (roots_.empty() && install_.empty()) return;
    std::map<std::string, apt::Pin> want;
    if (index_) {
      auto closure = apt::ComputeClosure(*index_, installed_, RootPairs(""));
      if (!closure.ok()) {
        plan_.blockers.push_back("apt: " + closure.error);
        return;
      }
      for (const auto& [name, version] : closure.packages) want[name].version = version;
      // Which layers each package serves: each layer's own closure (names only; the versions are the run's).
      std::set<std::string> layers;
      for (const auto& r : roots_) layers.insert(r.layer);
      for (const auto& layer : layers) {
        auto own = apt::ComputeClosure(*index_, installed_, RootPairs(layer));
        for (const auto& [name, version] : own.packages)
          if (auto it = want.find(name); it != want.end()) it->second.layers.push_back(layer);
      }
    } else if (install_.empty()) {
      // Everything is installed: gpuprep's own preferences, if they cover these packages at their installed
      // versions, are still the closure it computed when it installed them.
      bool covered = !old_pins_.empty();
      for (const auto& r : roots_) {
        auto it = old_pins_.find(r.name);
        covered = covered && it != old_pins_.end() && it->second.version == r.version;
      }
      for (const auto& [name, pin] : old_pins_) {
        const std::string* have = InstalledVersion(name);
        covered = covered && have && *have == pin.version;
      }
      if (!covered) {
        plan_.needs_index = true;
        return;
      }
      want = old_pins_;
    } else {
      return;  // resolved at apply time
    }
    std::set<std::string> left_alone;
    for (const auto& l : ApplyLayers())
      if (!Selected(l)) left_alone.insert(l);
    const PinDecision pins = DecidePins(want, old_pins_, left_alone);
    for (const auto& c : pins.conflicts)
      plan_.blockers.push_back("apt: " + c +
                               " (include both layers with --only, or run apply without --only/--skip)");
    for (const auto& [name, pin] : pins.file) plan_.pins.emplace_back(name, pin.version);
    std::set<std::string> names;  // the pins, and earlier pins that may be held but no longer installed
    for (const auto& [name, pin] : pins.file) names.insert(name);
    for (const auto& [name, pin] : old_pins_) names.insert(name);
    auto dpkg = apt::ParseDpkgStatus(status_text_, names);
    for (const auto& name : pins.managed) {
      const std::string& version = pins.file.at(name).version;
      auto it = dpkg.find(name);
      const bool at_pin = it != dpkg.end() && it->second.installed && it->second.version == version;
      // Every package of the closure that is not at its version is named on the install line with it: apt
      // gives up an installed package of another branch (or flavour) only for packages it is asked for.
      const std::string word = name + "=" + version;
      if (!at_pin && std::find(install_.begin(), install_.end(), word) == install_.end())
        install_.push_back(word);
      if (!at_pin || !it->second.held) hold_.push_back(name);
      if (it != dpkg.end() && it->second.held && !at_pin) allow_held_ = true;
    }
    // gpuprep's earlier pins that no layer still owns at their version (a stack change) are released first.
    for (const auto& name : pins.released) {
      auto it = dpkg.find(name);
      if (it != dpkg.end() && it->second.held) unhold_.push_back(name);
    }
    if (!unhold_.empty()) allow_held_ = true;
    prefs_want_ = apt::PreferencesContents(stack_.name, pins.file);
  }

  // The roots of `layer` ("" = of every layer in the run) as (name, version) pairs.
  std::vector<std::pair<std::string, std::string>> RootPairs(const std::string& layer) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : roots_)
      if (layer.empty() || r.layer == layer) out.emplace_back(r.name, r.version);
    return out;
  }

  std::string FoundVersion(const std::vector<manifest::AptPackage>& pkgs) const {
    for (const auto& p : pkgs)
      if (const std::string* v = InstalledVersion(p.name)) return *v;
    return "";
  }

  static std::string Wanted(const manifest::Pinned& pin, const std::vector<manifest::AptPackage>& pkgs) {
    if (pin.version) return pin.version->str();
    return pkgs.empty() ? "" : pkgs.front().version.empty() ? pkgs.front().upstream : pkgs.front().version;
  }

  std::string Unknown(const std::string& layer, const manifest::Pinned& pin,
                      const std::vector<manifest::AptPackage>& pkgs) const {
    if (pin.unknown)
      return "the stack's version is unknown (" +
             (pin.reason.empty() ? std::string("no verified source") : pin.reason) +
             "); pin one in a site manifest (extends: " + stack_.name + ") or run with --skip " + layer;
    if (pkgs.empty())
      return "the stack names no packages for this layer; add them or run with --skip " + layer;
    return "";
  }

  // Why a driver install is refused when the distribution does not publish the running kernel's headers:
  // a provider's own kernel, or a distribution kernel so old its archive dropped it.
  std::string HeadersMissing(const std::string& headers, const std::string& from) const {
    return "kernel " + facts_.kernel + " has no headers package (" + headers + " is not in " + from +
           "), so DKMS cannot build NVIDIA's module for it: install the distribution's current kernel (its "
           "meta package: linux-generic on Ubuntu, linux-image-" +
           (arch_.empty() ? "amd64" : arch_) +
           " on Debian) and reboot, or install this kernel's headers from its provider (/lib/modules/" +
           facts_.kernel +
           "/build), then run gpuprep apply again; or leave the driver as it is with --skip driver";
  }

  void Driver() {
    const auto& d = stack_.driver;
    if (!Selected("driver")) return void(Add("driver", Kind::kSkipped, "not selected"));
    // A host the stack cannot serve is refused before any change (like Secure Boot): installing CUDA and
    // friends for a driver that will never load only leaves packages behind.
    auto block = [this](const std::string& why) {
      plan_.blockers.push_back(why);
      blocked_layers_.insert("driver");
      Add("driver", Kind::kRefused, why);
    };
    if (facts_.gpus.empty())
      return block("no NVIDIA GPU on this host: stack " + stack_.name +
                   " sets up a GPU driver (to install only the libraries: --skip driver)");
    if (auto why = Unknown("driver", d.version, d.packages); !why.empty())
      return void(Add("driver", Kind::kRefused, why));
    const bool open = d.flavour == "open" || d.flavour == "server-open";
    for (const auto& g : facts_.gpus) {
      const std::string gpu = "GPU " + g.pci + " (" + g.name + ")";
      if (!g.architecture.empty() && !stack_.architectures.empty() &&
          !Contains(stack_.architectures, g.architecture))
        return block(gpu + " is " + g.architecture + ", which stack " + stack_.name + " does not support (" +
                     Join(stack_.architectures, ", ") + "); choose a stack for " + g.architecture +
                     " GPUs with --manifest");
      // The flavour and ceiling rules of compat.yaml (driver_rules), as doctor and manifest validate apply
      // them.
      const manifest::GpuModel* m =
          manifest::EmbeddedCompat().GpuByPci(g.device_id, g.subsystem_vendor_id, g.subsystem_device_id);
      std::optional<int> cuda_major;
      if (stack_.cuda.enabled && stack_.cuda.version.known())
        cuda_major = static_cast<int>(stack_.cuda.version.version->major());
      if (m) {
        for (const auto& ex : stack_.boards_excluded)
          if (ex.Matches(*m))
            return block(gpu + " is not claimed by stack " + stack_.name + ": " + ex.why +
                         "; choose another stack with --manifest");
        if (std::string why = m->StackCannotRun(*d.version.version, open, cuda_major); !why.empty())
          return block(gpu + ": stack " + stack_.name + " (driver " + d.version.version->str() + ", " +
                       d.flavour + ") cannot run it: " + why + "; choose another stack with --manifest");
      }
    }
    driver_ok_ = true;
    const size_t before = install_.size();
    // A driver at exactly the pinned version that other packages installed (the provider's image, Ubuntu's
    // nvidia-driver-NNN) is loaded and answers: installing NVIDIA's packages over it would only churn.
    const std::string pinned = d.version.version->str();
    const bool other_source = facts_.driver.module.loaded && facts_.driver.module.version == pinned &&
                              facts_.driver.userspace_version == pinned && FoundVersion(d.packages).empty();
    std::string error;
    std::string detail = other_source ? "" : Packages("driver", d.packages, pinned, error);
    if (!error.empty()) return block(error);
    driver_installs_ = install_.size() > before;
    if (driver_installs_ && !facts_.driver.kernel_headers && !facts_.kernel.empty()) {
      const std::string headers = apt::KernelHeadersPackage(facts_.kernel);
      const apt::ListsAnswer found =
          in_.headers ? *in_.headers
                      : apt::FindKernelPackage(fs_, "/var/lib/apt/lists", headers, "the host's apt lists");
      if (found.state == apt::Availability::kMissing) return block(HeadersMissing(headers, found.from));
      if (!ValidDebName(headers))  // the kernel release is read from the host: outside input
        return block(HeadersMissing(headers, "a Debian package name"));
      install_.insert(install_.begin() + static_cast<long>(before), headers);
      plan_.kernel_headers = headers;
      detail += "; kernel headers for " + facts_.kernel;
    }
    if (driver_installs_ && facts_.driver.secure_boot.value_or(false) && !d.signed_modules &&
        !facts_.driver.dkms_signed) {
      plan_.blockers.push_back(
          "Secure Boot is on and stack " + stack_.name +
          " builds unsigned DKMS modules: enrol a Machine Owner Key "
          "first (sudo mokutil --import /var/lib/shim-signed/mok/MOK.der, or sudo update-secureboot-policy "
          "--new-key), reboot and confirm the key in the MOK manager, then run gpuprep apply again; or "
          "disable "
          "Secure Boot, or use a stack with driver.signed_modules: true");
      blocked_layers_.insert("driver");
      return void(Add("driver", Kind::kRefused, "Secure Boot is on and the modules would be unsigned"));
    }
    nouveau_ =
        !NouveauBlacklisted(fs_) && (facts_.driver.nouveau_loaded || NouveauLoaded(fs_) || driver_installs_);
    if (nouveau_) detail += std::string(detail.empty() ? "" : "; ") + "nouveau not blacklisted";
    persistenced_ = !UnitEnabled(fs_, "nvidia-persistenced.service") && !facts_.driver.persistenced_enabled;
    if (persistenced_) detail += std::string(detail.empty() ? "" : "; ") + "nvidia-persistenced not enabled";
    reboot_reasons_ = driver_installs_ ? std::vector<std::string>{} : RebootReasons(fs_, stack_);
    LayerDecision& l = Add("driver", Kind::kNone, detail);
    l.found = facts_.driver.module.loaded ? facts_.driver.module.version : FoundVersion(d.packages);
    l.wanted = Wanted(d.version, d.packages);
    if (!detail.empty()) {
      l.kind = Kind::kInstall;
    } else if (!reboot_reasons_.empty()) {
      l.kind = Kind::kReboot;
      l.detail = "reboot required: " + Join(reboot_reasons_, "; ");
    } else {
      l.detail =
          other_source
              ? "driver " + pinned +
                    " is loaded and its libraries match (installed by other packages; left as they are)"
              : "installed and held";
    }
  }

  void FabricManager() {
    const auto& d = stack_.driver;
    if (facts_.nvswitch_count == 0)
      return void(Add("fabricmanager", Kind::kNotApplicable, "no NVSwitch on this host"));
    if (!Selected("fabricmanager")) return void(Add("fabricmanager", Kind::kSkipped, "not selected"));
    if (!d.version.known())
      return void(Add("fabricmanager", Kind::kRefused,
                      "the driver version is unknown, so the fabric manager's is too"));
    if (d.fabricmanager_packages.empty())
      return void(Add("fabricmanager", Kind::kRefused,
                      "this host has NVSwitches but the stack names no fabric manager packages"));
    const std::string want = d.version.version->str();
    for (const auto& p : d.fabricmanager_packages) {
      const std::string up = !p.version.empty()   ? DebVersion::Parse(p.version).upstream
                             : p.upstream.empty() ? want
                                                  : p.upstream;
      if (up != want)
        return void(Add("fabricmanager", Kind::kRefused,
                        p.name + " " + up + " does not match driver " + want +
                            " (the fabric manager must run at exactly the driver's version)"));
    }
    std::string error;
    std::string detail = Packages("fabricmanager", d.fabricmanager_packages, want, error);
    if (!error.empty()) return void(Add("fabricmanager", Kind::kRefused, error));
    fm_enable_ = !UnitEnabled(fs_, "nvidia-fabricmanager.service");
    if (fm_enable_) detail += std::string(detail.empty() ? "" : "; ") + "nvidia-fabricmanager not enabled";
    LayerDecision& l = Add("fabricmanager", detail.empty() ? Kind::kNone : Kind::kInstall,
                           detail.empty() ? "installed, held and enabled" : detail);
    l.found = FoundVersion(d.fabricmanager_packages);
    l.wanted = want;
  }

  void Component(const std::string& name, const manifest::ComponentSpec& c) {
    if (!c.enabled) return void(Add(name, Kind::kNotApplicable, "not part of stack " + stack_.name));
    if (!Selected(name)) return void(Add(name, Kind::kSkipped, "not selected"));
    if (c.source == "redist") return Redist(name, c);
    if (auto why = Unknown(name, c.version, c.packages); !why.empty())
      return void(Add(name, Kind::kRefused, why));
    std::string error;
    std::string detail =
        Packages(name, c.packages, c.version.version->str(), error, name == "cudnn" || name == "nccl");
    if (!error.empty()) return void(Add(name, Kind::kRefused, error));
    LayerDecision& l = Add(name, detail.empty() ? Kind::kNone : Kind::kInstall,
                           detail.empty() ? "installed and held" : detail);
    l.found = FoundVersion(c.packages);
    // Installs apt did not make (pip wheels, tarballs, runfiles) do not satisfy the pins, but the plan says
    // what is there, as doctor does.
    const probe::Component* probed = name == "cuda"    ? &facts_.cuda
                                     : name == "cudnn" ? &facts_.cudnn
                                                       : &facts_.nccl;
    if (l.found.empty() && probed->found)
      l.found = probed->version + " via " + (probed->source.empty() ? "another installer" : probed->source) +
                ", not apt";
    l.wanted = Wanted(c.version, c.packages);
  }

  // `source: redist`: NVIDIA's archives into /opt/gpuprep/<layer>/ (redist/install.h), then ldconfig.
  void Redist(const std::string& name, const manifest::ComponentSpec& c) {
    if (!c.version.known()) return void(Add(name, Kind::kRefused, Unknown(name, c.version, c.packages)));
    redist::Request req;
    try {
      req = redist::MakeRequest(name, c, facts_.arch);
    } catch (const redist::RedistError& e) {
      return void(Add(name, Kind::kRefused, e.what()));
    }
    const redist::State st = redist::Inspect(fs_, req);
    LayerDecision& l = Add(name, st.installed ? Kind::kNone : Kind::kInstall, st.detail);
    l.found = st.found;
    l.wanted = req.version;
    if (!st.installed) redist_.push_back(req);
  }

  // docker, container_toolkit, image (plan/containers.cc): pinned packages go through Packages() (resolved,
  // in the closure, pinned and held); the distribution's docker.io joins the transaction by name.
  void Containers() {
    containers_ =
        PlanContainers(in_, [this](const std::string& layer, const std::vector<manifest::AptPackage>& pkgs,
                                   const std::string& upstream,
                                   std::string& error) { return Packages(layer, pkgs, upstream, error); });
    plan_.layers.insert(plan_.layers.end(), containers_.layers.begin(), containers_.layers.end());
    for (const auto& p : containers_.install) install_.push_back(p.name);
    plan_.blockers.insert(plan_.blockers.end(), containers_.blockers.begin(), containers_.blockers.end());
  }

  // A system file gpuprep edits (daemon.json, the nouveau blacklist) that is a symbolic link is written
  // through it, as apply's WriteAtomic does (sys/fs.h ResolveWriteTarget), so `plan --format sh` writes the
  // same file; a link leading out of /etc is bad input: exit 2, before anything changes.
  void WriteThroughLinks() {
    for (auto& step : plan_.steps)
      for (auto& a : step.actions) {
        if (a.kind != Action::Kind::kWrite || !a.keep_backup) continue;
        const sys::WriteTarget t = sys::ResolveWriteTarget(fs_, a.path);
        if (!t.error.empty()) throw UsageError(t.error);
        a.link = t.link;
        a.path = t.path;
      }
  }

  // An engine already there is left as it is (plan/containers.cc), but the pins gpuprep gave the docker
  // layer's packages when it installed them stay that layer's: installed at the pin and pinned by gpuprep
  // at that version, each is a root of the run, so the pin and the hold are kept.
  void KeepEnginePins() {
    if (!Selected("docker") || !stack_.docker.present) return;
    for (const auto& p : stack_.docker.packages) {
      if (p.version.empty() && p.upstream.empty())
        continue;  // the distribution's engine by name: never pinned
      const std::string* have = InstalledVersion(p.name);
      auto old = old_pins_.find(p.name);
      if (!have || old == old_pins_.end() || old->second.version != *have ||
          !apt::MatchesPin(*have, Rule(p, "", false)))
        continue;
      if (std::none_of(roots_.begin(), roots_.end(), [&p](const Root& r) { return r.name == p.name; }))
        roots_.push_back({"docker", p.name, *have});
    }
  }

  Step& NewStep(std::string id, std::vector<std::string> layers, std::string title) {
    plan_.steps.push_back(Step{std::move(id), std::move(layers), std::move(title), {}});
    return plan_.steps.back();
  }

  std::vector<std::string> AptLayers() const {
    std::vector<std::string> out;
    for (const auto& l : plan_.layers)
      if (l.kind == Kind::kInstall && l.name != "driver")
        out.push_back(l.name);
      else if (l.kind == Kind::kInstall && driver_installs_)
        out.push_back(l.name);
    return out;
  }

  void Repositories(bool& sources_changed) {
    for (const auto* r : AptRepositories()) {
      if (!fs_.Exists(r->keyring_path)) {
        if (r->key_fingerprint.empty() && r->keyring_sha256.empty()) {
          plan_.blockers.push_back("repository " + r->name + ": no key_fingerprint or keyring_sha256 pins " +
                                   r->keyring_url + "; gpuprep will not install an unpinned key");
          continue;
        }
        if (!UrlAllowed(r->keyring_url)) {
          plan_.blockers.push_back(
              "repository " + r->name + ": " + r->keyring_url +
              " is not https (plain http and file:// only for loopback and local mirrors)");
          continue;
        }
        Step& s = NewStep("repo." + r->name + ".key", {},
                          "repository " + r->name + ": fetch the signing key " + r->keyring_url +
                              " and check its " + (r->keyring_sha256.empty() ? "fingerprint" : "sha256"));
        Action a;
        a.kind = Action::Kind::kFetch;
        a.url = r->keyring_url;
        a.path = r->keyring_path;
        a.sha256 = r->keyring_sha256;
        a.fingerprint = r->key_fingerprint;
        s.actions.push_back(a);
        sources_changed = true;
      }
      const std::string want = apt::ListFileContents(*r, stack_.name);
      auto have = fs_.Read(r->list_path);
      if (!have || *have != want) {
        Step& s = NewStep("repo." + r->name + ".list", {}, "repository " + r->name + ": " + r->list_path);
        if (have) s.actions.push_back(Action::Move(r->list_path, r->list_path + ".gpuprep.bak"));
        s.actions.push_back(Action::Write(r->list_path, want, 0644, false));
        sources_changed = true;
      }
      auto conflicts = apt::FindConflicts(fs_, *r);
      if (!conflicts.empty()) {
        Step& s = NewStep("repo." + r->name + ".conflicts", {},
                          "repository " + r->name + ": move aside lists that name it with another key");
        for (const auto& c : conflicts) s.actions.push_back(Action::Move(c.path, c.path + ".gpuprep.bak"));
        sources_changed = true;
      }
      if (!apt::ListsPresent(fs_, *r)) sources_changed = true;
    }
  }

  void Steps() {
    const bool any_apt = !install_.empty() || !hold_.empty();
    if (any_apt && (apt::DpkgInterrupted(fs_) || !facts_.dpkg_interrupted.empty())) {
      NewStep("dpkg.repair", {}, "dpkg was interrupted: finish configuring half-installed packages")
          .actions.push_back(Action::Run(apt::DpkgRepairArgv(), apt::AptEnv()));
    }
    bool sources_changed = !containers_.before.empty();
    plan_.steps.insert(plan_.steps.end(), containers_.before.begin(), containers_.before.end());
    if (!install_.empty()) Repositories(sources_changed);
    // Always before an install: the versions were resolved from the repositories' current index, and the
    // host's lists must hold them too.
    if (!install_.empty())
      NewStep("apt.update", {}, "refresh the package lists")
          .actions.push_back(Action::Run(apt::UpdateArgv(in_.apt), apt::AptEnv()));
    if (!unhold_.empty()) {
      NewStep("apt.unhold", {},
              "release gpuprep's holds on packages the stack no longer pins at these versions")
          .actions.push_back(Action::Run(apt::UnholdArgv(unhold_)));
    }
    if (!prefs_want_.empty() && prefs_want_ != prefs_text_) {
      // gpuprep's own file: no backup beside it (apt would read, or warn about, every file in preferences.d).
      const bool ours = prefs_text_.empty() || StartsWith(prefs_text_, "# gpuprep:");
      NewStep("apt.pin", {},
              "pin every package of the stack at its exact version (" + std::string(apt::kPreferencesPath) +
                  ", priority " + std::to_string(apt::kPinPriority) + ")")
          .actions.push_back(Action::Write(apt::kPreferencesPath, prefs_want_, 0644, !ours));
    } else if (plan_.needs_index && !install_.empty()) {
      NewStep("apt.pin", {},
              "pin every package of the stack at the exact version resolved from the repositories' "
              "index at apply time (" +
                  std::string(apt::kPreferencesPath) + ")");
    }
    if (!install_.empty()) {
      apt::AptOptions o = in_.apt;
      o.allow_change_held = allow_held_;
      Action a = Action::Run(apt::InstallArgv(install_, o), apt::AptEnv());
      a.apt_progress = true;
      a.timeout = std::chrono::seconds(3600);
      NewStep("apt.install", AptLayers(), "one apt transaction for every missing package, pinned exactly")
          .actions.push_back(a);
    }
    // After the install: a failed install must not leave a host whose only display driver is blacklisted.
    if (nouveau_) {
      Step& s =
          NewStep("driver.nouveau", {"driver"}, "blacklist nouveau so the NVIDIA module can bind the GPUs");
      s.actions.push_back(Action::Write(kNouveauBlacklistPath, kNouveauBlacklist));
      s.actions.push_back(Action::Run({"update-initramfs", "-u"}));
    }
    if (!hold_.empty())
      NewStep("apt.hold", AptLayers(), "hold every pinned package so upgrades cannot move them")
          .actions.push_back(Action::Run(apt::HoldArgv(hold_)));
    else if (plan_.needs_index && !install_.empty())
      NewStep("apt.hold", AptLayers(), "hold every package of the stack (resolved at apply time)");
    if (persistenced_)
      NewStep("driver.persistenced", {"driver"}, "enable the persistence daemon")
          .actions.push_back(Action::Run({"systemctl", "enable", "nvidia-persistenced.service"}));
    if (fm_enable_)
      NewStep("fabricmanager.enable", {"fabricmanager"}, "enable the fabric manager (NVSwitch)")
          .actions.push_back(Action::Run({"systemctl", "enable", "nvidia-fabricmanager.service"}));
    for (const auto& r : redist_) {
      Action a;
      a.kind = Action::Kind::kRedist;
      a.redist = r;
      Step& s = NewStep("redist." + r.layer, {r.layer},
                        r.layer + ": NVIDIA's redistributable archives into " + r.prefix);
      s.actions.push_back(a);
      s.actions.push_back(Action::Run({"ldconfig"}));
    }
    if (driver_ok_ && (driver_installs_ || nouveau_ || !reboot_reasons_.empty())) {
      Action a;
      a.kind = Action::Kind::kRebootCheck;
      a.contents = stack_.driver.version.version->str();
      NewStep("reboot.check", {"driver"}, "reboot if the new driver is not the loaded one")
          .actions.push_back(a);
    }
    plan_.steps.insert(plan_.steps.end(), containers_.after.begin(), containers_.after.end());
    for (const auto& l : plan_.layers) {
      const bool changed = l.kind == Kind::kInstall || l.kind == Kind::kReboot;
      const bool asked = Contains(in_.verify_layers, l.name) && l.kind == Kind::kNone;
      if (changed || asked)
        NewStep("verify." + l.name, {l.name}, "verify " + l.name).actions.push_back(Action::Verify(l.name));
    }
  }

  const PlanInput& in_;
  const manifest::Stack& stack_;
  const probe::HostFacts& facts_;
  const sys::Fs& fs_;
  Plan plan_;
  std::map<std::string, std::string> installed_;  // every installed package -> version
  std::map<std::string, apt::DpkgEntry> held_;    // installed packages' dpkg state (hold)
  std::string status_text_, arch_, prefs_text_, prefs_want_;
  const apt::Index* index_ = nullptr;
  apt::RepoIndex host_index_;
  std::map<std::string, apt::Pin> old_pins_;  // gpuprep's preferences file as it is
  struct Root {
    std::string layer, name, version;
  };
  std::vector<Root> roots_;  // the selected layers' own packages at exact versions
  std::vector<std::string> install_, hold_, unhold_;
  std::set<std::string> blocked_layers_;  // layers whose refusal already stands in plan_.blockers
  bool allow_held_ = false, driver_ok_ = false, driver_installs_ = false, nouveau_ = false,
       persistenced_ = false, fm_enable_ = false;
  std::vector<std::string> reboot_reasons_;
  std::vector<redist::Request> redist_;
  ContainerPlan containers_;
};

}  // namespace

Plan BuildPlan(const PlanInput& in) { return Planner(in).Build(); }

std::vector<const manifest::AptRepository*> AptRepositoriesFor(const manifest::Stack& stack,
                                                               const probe::HostFacts& facts) {
  std::vector<const manifest::AptRepository*> out;
  // The container toolkit's repository serves only the toolkit (plan/containers.cc): it is one of these
  // when the stack installs the toolkit.
  const bool toolkit = stack.container_toolkit.enabled && !stack.container_toolkit.packages.empty();
  for (const auto* r : stack.RepositoriesFor(facts.os.id, facts.os.version_id))
    if (toolkit || (r->name.find("container-toolkit") == std::string::npos &&
                    r->url.find("libnvidia-container") == std::string::npos))
      out.push_back(r);
  return out;
}

}  // namespace gp::plan
