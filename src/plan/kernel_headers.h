// The kernel packages a driver built by DKMS needs beyond the running kernel's headers: the headers meta
// package of each installed kernel meta (so every future kernel comes with its headers), and the headers of
// each installed kernel that has no nvidia module. Pure: read from HostFacts, used by the driver layer's
// plan and by apply's host state (which asks the host's lists whether they are published).
#pragma once
#include <string>
#include <vector>

#include "probe/host.h"

namespace gp::plan {

// The headers metas to install: for each installed flavour meta linux-image-M (apt::KernelHeadersMeta),
// linux-headers-M when it is not installed; in the order dpkg lists the image metas.
std::vector<std::string> HeadersMetasToAdd(const probe::HostFacts& facts);

// Whether an installed kernel meta would bring future kernels (a flavour linux-image-M is installed).
bool HasKernelImageMeta(const probe::HostFacts& facts);

// The installed kernels other than the running one whose modules.dep was read and lists no nvidia module:
// DKMS builds one for each (the running kernel is the driver install's own).
std::vector<const probe::InstalledKernel*> KernelsWithoutModule(const probe::HostFacts& facts);

}  // namespace gp::plan
