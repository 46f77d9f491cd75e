// The one reader of the host state planning needs beyond HostFacts (plan/host_state.h): read once before a
// plan, and again before every re-plan (the host may have changed since the probe).
#pragma once
#include "manifest/model.h"
#include "plan/host_state.h"
#include "probe/host.h"
#include "sys/fs.h"

namespace gp::apply {

struct HostStateReads {
  bool lists = true;            // the host's apt lists for the stack's repositories (unused with an index)
  bool kernel_packages = true;  // whether the host's lists publish the kernel's headers and extra modules
};

// Reads the host state for planning `stack` on the host of `facts`, from `fs` (the host or --root tree).
plan::HostState ReadHostState(const sys::Fs& fs, const manifest::Stack& stack, const probe::HostFacts& facts,
                              const HostStateReads& reads = {});

// Only what the reboot check reads (plan::RebootReasons): the dpkg database, the loaded module, nouveau and
// /var/run/reboot-required.
plan::HostState ReadRebootState(const sys::Fs& fs);

}  // namespace gp::apply
