#include "host/files.h"

#include "apt/availability.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "docker/daemon_json.h"
#include "plan/planner.h"
#include "probe/state.h"
#include "redist/state.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::host {
namespace {

// The files and directories the rows declared, as they are.
void ReadDeclaredFiles(const sys::Fs& fs, const Reads& reads, plan::HostState& s) {
  for (const auto& path : reads.files) s.files[path] = fs.Read(path);
  for (const auto& [dir, suffix] : reads.dirs)
    for (const auto& name : fs.List(dir))
      if (EndsWith(name, suffix)) s.files[dir + "/" + name] = fs.Read(dir + "/" + name);
}

// The daemon.json gpuprep would replace, and every file a plan replaces with a backup, through their links.
void ReadWriteTargets(const sys::Fs& fs, plan::HostState& s) {
  // Errors name the file gpuprep would replace, as this machine sees it (under --root, a link followed).
  s.daemon_json = fs.Read(docker::kDaemonJsonPath);
  for (const char* path : plan::kBackedUpFiles) s.write_targets[path] = sys::ResolveWriteTarget(fs, path);
  const sys::WriteTarget& daemon = s.write_targets[docker::kDaemonJsonPath];
  s.daemon_json_shown = fs.HostPath(daemon.error.empty() ? daemon.path : docker::kDaemonJsonPath);
  if (!daemon.link.empty()) s.daemon_json_link_shown = fs.HostPath("/etc/docker") + "/daemon.json";
}

}  // namespace

plan::HostState ReadRebootState(const sys::Fs& fs) {
  plan::HostState s;
  const probe::DpkgDatabase db = probe::ReadDpkgDatabase(fs);
  s.dpkg_journal = db.journal_pending();
  s.packages = plan::PackageStateOf(db, fs.Read(apt::kPreferencesPath));
  s.loaded_module = probe::LoadedModuleVersion(fs);
  s.reboot_required_file = probe::RebootRequired(fs);
  s.nouveau_blacklisted = probe::NouveauBlacklisted(fs);
  s.nouveau_loaded = probe::NouveauLoaded(fs);
  return s;
}

plan::HostState ReadFiles(const sys::Fs& fs, const manifest::Stack& stack, const probe::HostFacts& facts,
                          const Reads& reads) {
  plan::HostState s = ReadRebootState(fs);
  const auto repos = plan::AptRepositoriesFor(stack, facts);
  if (reads.lists) s.lists = apt::ReadRepoIndex(fs, repos, apt::DpkgArch(facts.arch));
  if (reads.kernel_lists)
    for (const auto& name : reads.kernel_packages)
      if (ValidDebName(name))
        s.kernel_packages[name] =
            apt::FindKernelPackage(fs, "/var/lib/apt/lists", name, "the host's apt lists");
  for (const auto* r : stack.RepositoriesFor(facts.os.id, facts.os.version_id)) {
    plan::RepositoryFiles& f = s.repositories[r->list_path];
    f.keyring = fs.Exists(r->keyring_path);
    f.list = fs.Read(r->list_path);
    f.conflicts = apt::FindConflicts(fs, *r);
  }
  for (const auto& req : reads.redist) s.redist[req.layer] = redist::Inspect(fs, req);
  s.wanted_units = probe::WantedUnits(fs);
  ReadDeclaredFiles(fs, reads, s);
  ReadWriteTargets(fs, s);
  return s;
}

}  // namespace gp::host
