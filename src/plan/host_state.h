// The file half of the host: what planning reads under --root, as one value read before planning
// (host/files.h ReadFiles, again before every re-plan; HostFacts is the live half, read once): the package
// state, the host's apt lists for the stack's repositories, the repositories' files, redistributable
// installs, enabled units, the loaded module, nouveau, daemon.json, the targets of the files the plan writes,
// and the files the layer table's rows declare. plan/ reads no file: every planning function is a function of
// values.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apt/availability.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "manifest/model.h"
#include "plan/packages.h"
#include "redist/state.h"
#include "sys/fs.h"

namespace gp::plan {

// The nouveau blacklist gpuprep writes.
inline constexpr const char* kNouveauBlacklistPath = "/etc/modprobe.d/blacklist-nouveau.conf";

// Every file a plan may replace keeping a backup beside it: daemon.json, the nouveau blacklist and apt's
// preferences file (when it is not gpuprep's own). The host state resolves each through its links.
inline constexpr const char* kBackedUpFiles[] = {"/etc/docker/daemon.json", kNouveauBlacklistPath,
                                                 apt::kPreferencesPath};

// A stack repository's files on the host.
struct RepositoryFiles {
  bool keyring = false;                  // its keyring_path exists
  std::optional<std::string> list;       // its list_path as it is
  std::vector<apt::Conflict> conflicts;  // other lists that name it with another key
};

struct HostState {
  PackageState packages;      // dpkg status and journal with holds, gpuprep's preferences and pins
  bool dpkg_journal = false;  // dpkg's updates/ journal holds files: dpkg was interrupted
  apt::RepoIndex lists;       // the host's apt lists for the stack's repositories
  // Whether the host's lists publish each kernel package a plan may add (the running kernel's headers, its
  // extra modules), by name.
  std::map<std::string, apt::ListsAnswer> kernel_packages;
  std::map<std::string, RepositoryFiles> repositories;  // by the repository's list_path
  std::map<std::string, redist::State> redist;          // by layer: the stack's redistributable installs
  std::set<std::string> wanted_units;        // units enabled for some target (probe/state.h WantedUnits)
  std::optional<std::string> loaded_module;  // the loaded nvidia module's version
  bool reboot_required_file = false;         // probe/state.h RebootRequired
  bool nouveau_blacklisted = false;          // a modprobe.d file blacklists nouveau
  bool nouveau_loaded = false;               // /sys/module/nouveau
  std::optional<std::string> daemon_json;    // /etc/docker/daemon.json as it is
  std::string daemon_json_shown;             // its path as this machine sees it, for errors
  std::string
      daemon_json_link_shown;  // daemon.json itself when it is a link, as this machine sees it, else ""
  // kBackedUpFiles, each resolved through its symbolic links as apply's WriteAtomic resolves them.
  std::map<std::string, sys::WriteTarget> write_targets;
  // The files the layer table's rows declared (host/files.h Reads), by path, as they are (nullopt: absent).
  std::map<std::string, std::optional<std::string>> files;

  bool UnitEnabled(const std::string& unit) const { return wanted_units.count(unit) > 0; }
  // A declared file as it is; nullopt when absent or not declared.
  std::optional<std::string> File(const std::string& path) const {
    auto it = files.find(path);
    return it == files.end() ? std::nullopt : it->second;
  }
};

// Why a reboot is required, one sentence each; empty when none is. Detected, not guessed:
// /var/run/reboot-required exists; the stack's driver packages are installed at their pins but the
// loaded module is absent or another version; nouveau is still loaded although it is blacklisted.
std::vector<std::string> RebootReasons(const HostState& host, const manifest::Stack& stack);

}  // namespace gp::plan
