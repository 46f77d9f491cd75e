// The file half of the host: everything planning reads under --root (plan::HostState), read by one function,
// ReadFiles, before a plan and again before every re-plan (the host may have changed since the probe). The
// live half (NVML, the Docker socket, commands) is HostFacts, read once by the probe. The facts both halves
// hold (the loaded module, nouveau, enabled units, the dpkg database) have one reader each, probe/state.h.
// What is read for some layers only is declared by their rows of the layer table (layers/table.h) as Reads:
// this reader names no layer.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "manifest/model.h"
#include "plan/host_state.h"
#include "probe/host.h"
#include "redist/request.h"
#include "sys/fs.h"

namespace gp::host {

// What to read beyond what every plan reads.
struct Reads {
  bool lists = true;         // the host's apt lists for the stack's repositories (unused with an index)
  bool kernel_lists = true;  // look `kernel_packages` up in the host's apt lists
  std::vector<std::string> kernel_packages;  // packages a plan may add: are they in the host's apt lists?
  std::vector<std::string> files;            // files read as they are (HostState::files)
  // Directories whose files with the name suffix are read as they are (HostState::files): {dir, suffix}.
  std::vector<std::pair<std::string, std::string>> dirs;
  std::vector<redist::Request> redist;  // redistributable installs (HostState::redist, by request layer)
};

// Reads the file half for planning `stack` on the host of `facts`, from `fs` (the host or --root tree).
plan::HostState ReadFiles(const sys::Fs& fs, const manifest::Stack& stack, const probe::HostFacts& facts,
                          const Reads& reads);

// Only what the reboot check reads (plan::RebootReasons): the dpkg database, the loaded module, nouveau and
// /var/run/reboot-required.
plan::HostState ReadRebootState(const sys::Fs& fs);

}  // namespace gp::host
