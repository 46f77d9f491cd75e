// host layer (warnings only): CPU cores, RAM and /dev/shm per GPU against the stack's workload profile.
//
// Thresholds come from the stack's `workload` (Stack.workload.min_*_per_gpu). A stack that names a profile
// but gives no numbers gets that profile's defaults below; they are documented in docs and here:
//   llm-finetune: >= 8 CPU cores and >= 128 GiB RAM per GPU (gpuprep's default for this
//                 profile, docs/doctor.md); no /dev/shm minimum (NGC images run with --ipc=host, which
//                 shares the host's /dev/shm, so only a manifest-given minimum is checked).
//   general and every other profile: no defaults; only manifest-given minimums are checked.
// A shortfall is a warning: training still runs, only slower (data loaders starve, host RAM swaps).
#include "layers/check.h"
#include "layers/rules.h"
#include "util/strings.h"

namespace gp::layers {
namespace {

manifest::Workload Effective(const manifest::Workload& w) {
  manifest::Workload out = w;
  bool none = w.min_cpus_per_gpu == 0 && w.min_ram_per_gpu == 0 && w.min_shm_per_gpu == 0;
  if (none && w.profile == "llm-finetune") {
    out.min_cpus_per_gpu = 8;
    out.min_ram_per_gpu = 128ULL << 30;
  }
  return out;
}

std::string PerGpu(unsigned long long total, size_t gpus) { return HumanBytes(total / gpus); }

}  // namespace

LayerReport CheckHost(const CheckInput& in) {
  LayerReport r;
  r.name = "host";
  const probe::HostFacts& h = in.host;
  manifest::Workload w = Effective(in.stack.workload);
  std::vector<std::string> wanted;
  if (w.min_cpus_per_gpu) wanted.push_back(">= " + std::to_string(w.min_cpus_per_gpu) + " CPUs");
  if (w.min_ram_per_gpu) wanted.push_back(">= " + HumanBytes(w.min_ram_per_gpu) + " RAM");
  if (w.min_shm_per_gpu) wanted.push_back(">= " + HumanBytes(w.min_shm_per_gpu) + " /dev/shm");
  r.wanted = wanted.empty() ? "" : "per GPU (" + w.profile + "): " + Join(wanted, ", ");
  r.found = std::to_string(h.cpus) + " CPUs, " + HumanBytes(h.memory_bytes) + " RAM, " +
            HumanBytes(h.shm_bytes) + " /dev/shm";

  size_t n = h.gpus.size();
  if (n == 0) {
    r.Add("host.no-gpu", Status::kSkip, "no GPUs to size the host against");
    return r;
  }
  std::string per = " per GPU for the " + w.profile + " workload";
  std::string gpus = std::to_string(n) + " GPU" + (n == 1 ? "" : "s");
  if (w.min_cpus_per_gpu && static_cast<unsigned long long>(h.cpus) < w.min_cpus_per_gpu * n) {
    r.Add("host.cpus", Status::kWarn,
          std::to_string(h.cpus) + " CPU cores for " + gpus + ": below " +
              std::to_string(w.min_cpus_per_gpu) + per,
          "use a host with at least " + std::to_string(w.min_cpus_per_gpu * n) + " CPU cores, or fewer GPUs");
  }
  if (w.min_ram_per_gpu && h.memory_bytes < w.min_ram_per_gpu * n) {
    r.Add("host.memory", Status::kWarn,
          PerGpu(h.memory_bytes, n) + " RAM per GPU: below " + HumanBytes(w.min_ram_per_gpu) + per,
          "use a host with at least " + HumanBytes(w.min_ram_per_gpu * n) + " RAM, or fewer GPUs");
  }
  if (w.min_shm_per_gpu && h.shm_bytes < w.min_shm_per_gpu * n) {
    r.Add("host.shm", Status::kWarn,
          PerGpu(h.shm_bytes, n) + " /dev/shm per GPU: below " + HumanBytes(w.min_shm_per_gpu) + per,
          "sudo mount -o remount,size=" + std::to_string((w.min_shm_per_gpu * n + (1ULL << 30) - 1) >> 30) +
              "G /dev/shm");
  }
  if (r.findings.empty())
    r.Add("host.sized", Status::kOk, "CPU, RAM and /dev/shm per GPU meet the " + w.profile + " workload");
  return r;
}

}  // namespace gp::layers
