#include "plan/kernel_headers.h"

#include <algorithm>

#include "apt/availability.h"

namespace gp::plan {
namespace {

bool Installed(const probe::HostFacts& facts, const std::string& name) {
  return std::find(facts.kernel_metas.begin(), facts.kernel_metas.end(), name) != facts.kernel_metas.end();
}

}  // namespace

std::vector<std::string> HeadersMetasToAdd(const probe::HostFacts& facts) {
  std::vector<std::string> out;
  for (const auto& meta : facts.kernel_metas) {
    const std::string headers = apt::KernelHeadersMeta(meta);
    if (!headers.empty() && !Installed(facts, headers) &&
        std::find(out.begin(), out.end(), headers) == out.end())
      out.push_back(headers);
  }
  return out;
}

bool HasKernelImageMeta(const probe::HostFacts& facts) {
  return std::any_of(facts.kernel_metas.begin(), facts.kernel_metas.end(),
                     [](const std::string& m) { return !apt::KernelHeadersMeta(m).empty(); });
}

std::vector<const probe::InstalledKernel*> KernelsWithoutModule(const probe::HostFacts& facts) {
  std::vector<const probe::InstalledKernel*> out;
  for (const auto& k : facts.boot.kernels)
    if (k.release != facts.kernel && k.modules_dep && k.module_path.empty()) out.push_back(&k);
  return out;
}

}  // namespace gp::plan
