// host layer: CPU cores, RAM and /dev/shm against the GPUs, for the stack's workload (warnings only, unless
// the stack names a task the host cannot fit).
//
// Minimums come from the stack's `workload` numbers when it gives them (min_cpus_per_gpu, min_ram_per_gpu,
// min_shm_per_gpu, per GPU). Otherwise the sourced ratios gpuprep size uses (size/host_ratios.h):
//   CPU cores: gpus x (DataLoader workers + 1) + 4 for the operating system, with 2 workers per GPU for
//              llm-finetune (and general or any other profile: the floor, the fewest workers any source
//              gives), 4 for vision and multimodal, 2 for recommender (stas00/ml-engineering
//              compute/cpu/README.md); CPUs are counted as the host reports them (logical CPUs).
//   RAM:       at least the GPUs' memory (compute/cpu-memory/README.md), from NVML or the catalogue's board
//              size; unknown memory leaves RAM unchecked.
//   /dev/shm:  only a manifest-given minimum (NGC images run with --ipc=host, which shares the host's).
// A shortfall is a warning: training still runs, only slower (data loaders starve, host RAM swaps).
//
// A stack whose `workload.task` names a Task document is judged as `gpuprep size --host` judges a host for
// that task (size::JudgeHost: the GPUs' memory against the best layout, CPU cores and RAM per GPU for its
// workload kind, offloaded states and embedding tables in host RAM, disk for its checkpoints and dataset);
// that judgement replaces the sourced floor. What does not fit the task is a failure (the task cannot start
// or cannot save), what is under the sourced floor a warning; the stack's own numbers still apply.
#include "layers/check.h"

#include <optional>

#include "layers/host_spec.h"
#include "layers/table.h"
#include "layers/task.h"
#include "size/host_check.h"
#include "size/host_ratios.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

std::string PerGpu(unsigned long long total, size_t gpus) { return HumanBytes(total / gpus); }

// The GPUs' memory together: NVML's totals, else the catalogue's board sizes; 0 when any is unknown.
unsigned long long GpuMemory(const CheckInput& in) {
  unsigned long long sum = 0;
  for (const probe::Gpu& g : in.host.gpus) {
    if (g.memory_bytes && *g.memory_bytes > 0) {
      sum += *g.memory_bytes;
      continue;
    }
    const manifest::GpuModel* m =
        in.compat.GpuByPci(g.device_id, g.subsystem_vendor_id, g.subsystem_device_id);
    if (!m || m->memory_mib == 0) return 0;
    sum += m->memory_mib << 20;
  }
  return sum;
}

// The URL a source string of host_ratios.h starts with.
std::string SourceUrl(const char* source) {
  const std::string s = source;
  return s.substr(0, s.find(' '));
}

// One finding per item of the task's verdict that is not ok; `code` by the item.
void AddTaskItem(LayerReport& r, const NamedTask& task, const size::HostItem& item) {
  struct ItemFix {
    const char* what;
    const char* code;
    std::string fix;
    std::string source;
  };
  const std::string size_cmd = "gpuprep size --task " + task.path;
  const ItemFix kinds[] = {
      {"GPU memory", "host.task-gpu-memory", "see the servers that fit the task: " + size_cmd, ""},
      {"CPU", "host.task-cpus", "use a host with at least " + item.need + ", or fewer GPUs",
       SourceUrl(size::kCpuSource)},
      {"RAM", "host.task-memory", "use a host with at least " + item.need + " RAM, or fewer GPUs",
       SourceUrl(size::kRamSource)},
      {"disk", "host.task-disk", "free at least " + item.need + " under /var, or use a host with more disk",
       ""},
  };
  const ItemFix* k = &kinds[0];
  for (const ItemFix& x : kinds)
    if (item.what == x.what) k = &x;
  const std::string head = item.what + " for the task " + task.name + " (" + task.path + "): ";
  std::string detail = item.detail;
  if (!k->source.empty()) detail += "; " + k->source;
  if (item.status == "unknown") {
    r.Add(k->code, Status::kSkip,
          head + (item.need.empty() ? "" : "needs " + item.need + ", ") + "unchecked: " + detail);
    return;
  }
  const bool short_of = item.status == "short";
  r.Add(k->code, short_of ? Status::kFail : Status::kWarn,
        head + (item.have.empty() ? "" : item.have + ", ") +
            (short_of ? "does not fit: " : "below the floor: ") +
            (item.need.empty() ? "" : "needs " + item.need + " ") + "(" + detail + ")",
        k->fix);
}

// The stack's task: the verdict of size::JudgeHost, one finding per item that is not ok.
void CheckTask(const CheckInput& in, const NamedTask& task, LayerReport& r,
               std::vector<std::string>& wanted) {
  const probe::HostFacts& h = in.host;
  const size::HostVerdict v =
      size::JudgeHost(task.task, HostSpecOf(h, in.compat, h.hostname.empty() ? "this host" : h.hostname));
  for (const size::HostItem& item : v.items) {
    if (!item.need.empty()) wanted.push_back(item.what + " >= " + item.need);
    if (item.status != "ok") AddTaskItem(r, task, item);
  }
  if (v.fits) {
    std::string how;
    for (const size::HostItem& item : v.items)
      if (item.what == "GPU memory")
        how = " (" + item.have + ", needs " + item.need + ": " + item.detail + ")";
    const std::string notes = v.notes.empty() ? "" : "; " + Join(v.notes, "; ");
    r.Add("host.task-fits", Status::kOk, "the task " + task.name + " (" + task.path + ") fits" + how + notes);
  }
}

// Where the CPU minimum comes from: the stack's number per GPU, or the sourced formula for the workload
// `kind` on `gpus` GPUs (`named`: the stack's profile names the kind; else the floor).
std::string HostCpuWhy(const manifest::Workload& w, size::WorkloadKind kind, int gpus, bool named) {
  return w.min_cpus_per_gpu
             ? std::to_string(w.min_cpus_per_gpu) + " per GPU, the stack's"
             : size::CpuFormula(kind, gpus) + ": " + std::to_string(size::RatioFor(kind).dataloader_workers) +
                   " DataLoader workers per GPU" +
                   (named ? " for " + std::string(size::RatioFor(kind).name) : std::string(", the floor"));
}

// /dev/shm against the stack's minimum per GPU (`workload` ends the message).
void CheckHostShm(const CheckInput& in, const std::string& workload, LayerReport& r) {
  const probe::HostFacts& h = in.host;
  const manifest::Workload& w = in.stack.workload;
  const size_t n = h.gpus.size();
  if (w.min_shm_per_gpu && h.shm_bytes < w.min_shm_per_gpu * n)
    r.Add("host.shm", Status::kWarn,
          PerGpu(h.shm_bytes, n) + " /dev/shm per GPU: below " + HumanBytes(w.min_shm_per_gpu) + " per GPU" +
              workload,
          "sudo mount -o remount,size=" + std::to_string((w.min_shm_per_gpu * n + (1ULL << 30) - 1) >> 30) +
              "G /dev/shm");
}

}  // namespace

LayerReport CheckHost(const CheckInput& in) {
  LayerReport r;
  r.name = "host";
  const probe::HostFacts& h = in.host;
  const manifest::Workload& w = in.stack.workload;
  r.found = std::to_string(h.cpus) + " CPUs, " + HumanBytes(h.memory_bytes) + " RAM, " +
            HumanBytes(h.shm_bytes) + " /dev/shm";
  const size_t n = h.gpus.size();
  if (n == 0) {
    r.Add("host.no-gpu", Status::kSkip, "no GPUs to size the host against");
    return r;
  }
  const std::optional<NamedTask> task = StackTask(in.stack);
  const bool floor = !task;  // without a task, the sourced floor; with one, the task's judgement
  const std::optional<size::WorkloadKind> named = size::WorkloadOfProfile(w.profile);
  const size::WorkloadKind kind = named.value_or(size::WorkloadKind::kLlm);  // the floor: the fewest workers
  const int gpus = static_cast<int>(n);
  const unsigned long long cpus_need =
      w.min_cpus_per_gpu ? static_cast<unsigned long long>(w.min_cpus_per_gpu) * n
      : floor            ? static_cast<unsigned long long>(size::CpuCoresFor(kind, gpus))
                         : 0;
  const unsigned long long gpu_mem = floor ? GpuMemory(in) : 0;
  const unsigned long long ram_need = w.min_ram_per_gpu ? w.min_ram_per_gpu * n : gpu_mem;
  const std::string gpus_text = std::to_string(n) + " GPU" + (n == 1 ? "" : "s");
  const std::string cpu_why = HostCpuWhy(w, kind, gpus, named.has_value());
  const std::string ram_why =
      w.min_ram_per_gpu ? HumanBytes(w.min_ram_per_gpu) + " per GPU, the stack's" : "the GPUs' memory";
  std::vector<std::string> wanted;
  if (task) CheckTask(in, *task, r, wanted);
  if (cpus_need) wanted.push_back(">= " + std::to_string(cpus_need) + " CPUs (" + cpu_why + ")");
  if (ram_need)
    wanted.push_back(">= " + HumanBytes(ram_need) + " RAM (" + ram_why + ")");
  else if (floor)
    wanted.push_back("RAM unchecked (the GPUs' memory is unknown)");
  if (w.min_shm_per_gpu) wanted.push_back(">= " + HumanBytes(w.min_shm_per_gpu * n) + " /dev/shm");
  r.wanted = "for " + gpus_text + " (" + w.profile + (task ? ", task " + task->name : std::string()) +
             "): " + Join(wanted, ", ");

  const std::string workload = " for the " + w.profile + " workload";
  if (cpus_need && static_cast<unsigned long long>(h.cpus) < cpus_need)
    r.Add("host.cpus", Status::kWarn,
          std::to_string(h.cpus) + " CPU cores for " + gpus_text + ": below " + std::to_string(cpus_need) +
              " (" + cpu_why + ")" + workload,
          "use a host with at least " + std::to_string(cpus_need) + " CPU cores, or fewer GPUs");
  if (ram_need && h.memory_bytes < ram_need)
    r.Add("host.memory", Status::kWarn,
          HumanBytes(h.memory_bytes) + " RAM for " + gpus_text + ": below " + HumanBytes(ram_need) + " (" +
              ram_why + ")" + workload,
          "use a host with at least " + HumanBytes(ram_need) + " RAM, or fewer GPUs");
  CheckHostShm(in, workload, r);
  if (r.findings.empty())
    r.Add("host.sized", Status::kOk, "CPU, RAM and /dev/shm meet the " + w.profile + " workload");
  return r;
}

extern const Layer kHostLayer = {"host", CheckHost, nullptr, nullptr, nullptr, nullptr};

}  // namespace gp::layers
