// JudgeHost (host_check.h).
#include "size/host_check.h"

#include <algorithm>

#include "size/format.h"

namespace gp::size {
namespace {

// The memory one GPU is judged with: NVML's total when the host gave it, else the catalogue's board size.
double GpuMemory(const HostGpu& g, std::string* from) {
  if (g.nvml_bytes && *g.nvml_bytes > 0) {
    *from = "NVML's total on this host";
    return static_cast<double>(*g.nvml_bytes);
  }
  if (g.board && g.board->memory_mib > 0) {
    *from = "the catalogue (" + g.board->memory_kind + ": " + g.board->memory_source + ")";
    return static_cast<double>(g.board->MemoryBytes());
  }
  return 0;
}

std::string Summary(const HostSpec& h) {
  std::string gpus = h.gpus.empty() ? "no GPUs" : std::to_string(h.gpus.size()) + "x " + h.gpus[0].name;
  for (const HostGpu& g : h.gpus)
    if (g.name != h.gpus[0].name) {
      gpus = std::to_string(h.gpus.size()) + " GPUs (mixed)";
      break;
    }
  std::string s =
      gpus + ", " + std::to_string(h.cpus) + " CPUs, " + Gb(static_cast<double>(h.memory)) + " RAM";
  if (h.disk_free) s += ", " + Gb(static_cast<double>(*h.disk_free)) + " free under /var";
  return s;
}

void AddHostItems(const Task& t, const HostSpec& h, const Option& o, HostVerdict& v) {
  const int n = static_cast<int>(h.gpus.size());
  const HostNeed need = NeedFor(t, o.at, n, 1, v.gpu_memory);
  v.items.push_back({"CPU", h.cpus >= need.cpu_cores ? "ok" : "below",
                     std::to_string(h.cpus) + " logical CPUs", std::to_string(need.cpu_cores) + " cores",
                     need.cpu_formula});
  const double ram = static_cast<double>(h.memory);
  std::string detail = "floor: the GPUs' memory " + Gb(need.ram_floor);
  if (need.ram_offload > 0) detail += " + the states the task keeps there " + Gb(need.ram_offload);
  if (need.ram_embeddings > 0) detail += " + embedding tables " + Gb(need.ram_embeddings);
  const std::string ram_status = ram < need.RamNeed() ? "short" : ram < need.RamMin() ? "below" : "ok";
  v.items.push_back({"RAM", ram_status, Gb(ram), Gb(need.RamMin()), detail});
  const std::string storage = "the model's 16-bit weights " + Gb(need.base_weights) + " + " +
                              std::to_string(need.kept) + " checkpoint(s) x " + Gb(need.checkpoint) +
                              (need.dataset > 0 ? " + dataset " + Gb(need.dataset) : std::string());
  if (!h.disk_free)
    v.items.push_back({"disk", "unknown", "", Gb(need.Storage()),
                       storage + "; the free space under /var is not known for this host"});
  else
    v.items.push_back({"disk", static_cast<double>(*h.disk_free) < need.Storage() ? "short" : "ok",
                       Gb(static_cast<double>(*h.disk_free)) + " free under /var", Gb(need.Storage()),
                       storage});
  v.notes.insert(v.notes.end(), need.notes.begin(), need.notes.end());
}

// The board the host is judged as: the first GPU's (its catalogue entry, or its name alone) with the
// smallest memory found; notes mixed GPUs and memory shared with the CPU.
Board JudgedHostBoard(const HostSpec& h, HostVerdict& v) {
  Board b = h.gpus[0].board ? *h.gpus[0].board : Board{};
  if (b.name.empty()) b.name = h.gpus[0].name;
  b.memory_mib = static_cast<uint64_t>(v.gpu_memory) >> 20;
  if (std::any_of(h.gpus.begin(), h.gpus.end(), [&](const HostGpu& g) { return g.name != h.gpus[0].name; }))
    v.notes.push_back("mixed GPUs: judged with the smallest memory and the first GPU's interconnect");
  if (b.Unified())
    v.notes.push_back(
        b.memory_kind == "system"
            ? b.name +
                  " shares the system memory with the CPU (NVML reports none): the figure is the "
                  "system's total, and the job's CPU side uses the same memory"
            : b.name + ": the Grace CPU's memory is reachable over NVLink-C2C but not counted");
  return b;
}

}  // namespace

HostVerdict JudgeHost(const Task& t, const HostSpec& h) {
  HostVerdict v;
  v.label = h.label;
  v.summary = Summary(h);
  if (h.gpus.empty()) {
    v.items.push_back({"GPU memory", "short", "no GPUs", "", "the host has no NVIDIA GPU"});
    return v;
  }
  std::string unknown;
  for (const HostGpu& g : h.gpus) {
    std::string from;
    const double m = GpuMemory(g, &from);
    if (m <= 0) {
      unknown = g.name;
      continue;
    }
    if (v.gpu_memory == 0 || m < v.gpu_memory) v.gpu_memory = m, v.gpu_memory_from = from;
  }
  if (!unknown.empty()) {
    v.items.push_back({"GPU memory", "unknown", "", "",
                       "the memory of " + unknown +
                           " is unknown: the host gave no NVML total and the catalogue has no sourced size"});
    return v;
  }
  const Board b = JudgedHostBoard(h, v);
  const int n = static_cast<int>(h.gpus.size());
  const int domain = h.nvswitches > 0 ? n : b.DomainIn(n);
  std::optional<Option> closest;
  auto best = BestAt(t, b, n, n, domain, &closest);
  v.option = best ? best : closest;
  if (!v.option) {
    v.items.push_back({"GPU memory", "short", Gb(v.gpu_memory), "",
                       "no layout of this model runs on " + std::to_string(n) + " GPUs"});
    return v;
  }
  const Option& o = *v.option;
  v.shortfall = best ? 0 : o.at.per_gpu - v.gpu_memory;
  // A lower bound that fits says nothing; one that does not fit is still short.
  const std::string status = !best ? "short" : o.at.lower_bound ? "unknown" : "ok";
  v.items.push_back(
      {"GPU memory", status, Gb(v.gpu_memory) + " per GPU",
       Gb(o.at.per_gpu) + (o.at.lower_bound ? " or more" : "") + " per GPU",
       std::string(Name(o.strategy)) + (o.tp > 1 ? " with tp " + std::to_string(o.tp) : "") + " on " +
           std::to_string(n) + (n == 1 ? " GPU" : " GPUs") + "; memory from " + v.gpu_memory_from +
           (o.at.lower_bound ? "; the need is a lower bound (activations not estimated): unchecked" : "")});
  AddHostItems(t, h, o, v);
  v.fits = std::none_of(v.items.begin(), v.items.end(), [](const HostItem& i) {
    return i.status == "short" || (i.what == "GPU memory" && i.status == "unknown");
  });
  return v;
}

std::string VerdictWord(const HostVerdict& v) {
  if (v.fits) return "fits";
  const bool short_of =
      std::any_of(v.items.begin(), v.items.end(), [](const HostItem& i) { return i.status == "short"; });
  return short_of ? "does not fit" : "unknown";
}

}  // namespace gp::size
