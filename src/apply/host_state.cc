#include "apply/host_state.h"

#include "apt/availability.h"
#include "apt/dpkg_status.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "docker/daemon_json.h"
#include "plan/kernel_headers.h"
#include "plan/planner.h"
#include "probe/parsers.h"
#include "probe/state.h"
#include "redist/error.h"
#include "redist/state.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::apply {
namespace {

// The stack's redistributable installs as they are, by layer.
void ReadRedist(const sys::Fs& fs, const manifest::Stack& stack, const probe::HostFacts& facts,
                plan::HostState& s) {
  const std::pair<const char*, const manifest::ComponentSpec*> components[] = {
      {"cuda", &stack.cuda}, {"cudnn", &stack.cudnn}, {"nccl", &stack.nccl}};
  for (const auto& [layer, c] : components) {
    if (!c->enabled || c->source != "redist" || !c->version.known()) continue;
    try {
      const redist::Request req = redist::MakeRequest(layer, *c, facts.arch);
      s.redist[req.layer] = redist::Inspect(fs, req);
    } catch (const redist::RedistError&) {  // the plan refuses the layer with the reason
    }
  }
}

}  // namespace

plan::HostState ReadRebootState(const sys::Fs& fs) {
  plan::HostState s;
  const probe::DpkgDatabase db = probe::ReadDpkgDatabase(fs);
  s.dpkg_journal = db.journal_pending();
  s.packages = plan::PackageStateOf(db, fs.Read(apt::kPreferencesPath));
  s.loaded_module = probe::LoadedModuleVersion(fs);
  s.reboot_required_file = fs.Exists("/var/run/reboot-required");
  s.nouveau_blacklisted = probe::NouveauBlacklisted(fs);
  s.nouveau_loaded = fs.Exists("/sys/module/nouveau");
  return s;
}

plan::HostState ReadHostState(const sys::Fs& fs, const manifest::Stack& stack, const probe::HostFacts& facts,
                              const HostStateReads& reads) {
  plan::HostState s = ReadRebootState(fs);
  const auto repos = plan::AptRepositoriesFor(stack, facts);
  if (reads.lists) s.lists = apt::ReadRepoIndex(fs, repos, apt::DpkgArch(facts.arch));
  // Asked only where a plan may add them: the headers on a GPU host whose kernel's headers are not
  // installed (the driver's DKMS build), the extra modules where ib_umad is neither loaded nor available
  // (NVLSM on HGX Blackwell).
  std::vector<std::string> kernel_packages;
  if (!facts.kernel.empty() && !facts.gpus.empty()) {
    if (!facts.driver.kernel_headers) kernel_packages.push_back(apt::KernelHeadersPackage(facts.kernel));
    // Where DKMS builds the driver: the headers meta of each installed kernel meta, and the headers of each
    // installed kernel that has no module (the driver layer's plan, plan/kernel_headers.h).
    for (auto& meta : plan::HeadersMetasToAdd(facts)) kernel_packages.push_back(std::move(meta));
    for (const probe::InstalledKernel* k : plan::KernelsWithoutModule(facts))
      if (!k->headers) kernel_packages.push_back(apt::KernelHeadersPackage(k->release));
    if (facts.fabric.platform == "hgx-blackwell" && !facts.fabric.ib_umad_loaded &&
        !facts.fabric.ib_umad_available)
      kernel_packages.push_back("linux-modules-extra-" + facts.kernel);
  }
  if (reads.kernel_packages)
    for (const auto& name : kernel_packages)
      if (ValidDebName(name))
        s.kernel_packages[name] =
            apt::FindKernelPackage(fs, "/var/lib/apt/lists", name, "the host's apt lists");
  for (const auto* r : stack.RepositoriesFor(facts.os.id, facts.os.version_id)) {
    plan::RepositoryFiles& f = s.repositories[r->list_path];
    f.keyring = fs.Exists(r->keyring_path);
    f.list = fs.Read(r->list_path);
    f.conflicts = apt::FindConflicts(fs, *r);
  }
  ReadRedist(fs, stack, facts, s);
  s.wanted_units = probe::WantedUnits(fs);
  s.experimental_toolkit_lists = probe::ExperimentalToolkitLists(fs);
  s.toolkit_runtime_mode = probe::ToolkitRuntimeMode(fs);
  // Errors name the file gpuprep would replace, as this machine sees it (under --root, a link followed).
  s.daemon_json = fs.Read(docker::kDaemonJsonPath);
  if (facts.fabric.platform == "hgx-blackwell") s.ib_umad_modules_load = fs.Read(plan::kIbUmadModulesLoad);
  for (const char* path : plan::kBackedUpFiles) s.write_targets[path] = sys::ResolveWriteTarget(fs, path);
  const sys::WriteTarget& daemon = s.write_targets[docker::kDaemonJsonPath];
  s.daemon_json_shown = fs.HostPath(daemon.error.empty() ? daemon.path : docker::kDaemonJsonPath);
  if (!daemon.link.empty()) s.daemon_json_link_shown = fs.HostPath("/etc/docker") + "/daemon.json";
  return s;
}

}  // namespace gp::apply
