// Text and JSON of the host around the GPUs and of host verdicts (render_servers.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "size/format.h"
#include "size/render_servers.h"
#include "util/input.h"

namespace gp::size {
namespace {

using nlohmann::ordered_json;

// "12-28 CPUs and 96-256 GB RAM per GPU" over the reference servers with `gpus` GPUs ("" when none).
std::string Shipped(int gpus) {
  double cmin = 1e18, cmax = 0, rmin = 1e30, rmax = 0;
  for (const ReferenceServer& s : ReferenceServers()) {
    if (s.gpus != gpus) continue;
    const double c = static_cast<double>(s.cpus) / gpus, r = static_cast<double>(s.ram) / gpus;
    cmin = std::min(cmin, c), cmax = std::max(cmax, c), rmin = std::min(rmin, r), rmax = std::max(rmax, r);
  }
  if (cmax == 0) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.0f-%.0f CPUs and %.0f-%.0f GB of RAM per GPU", cmin, cmax, rmin / 1e9,
                rmax / 1e9);
  return buf;
}

}  // namespace

std::string RenderHostNeedText(const Task& t, const Recommendation& r, bool verbose) {
  // The first fitting row whose memory was measured (a marketed size is only approximate), else the first.
  const BoardRow* row = nullptr;
  for (const BoardRow& x : r.rows)
    if (x.best && (!row || (row->board.Approximate() && !x.board.Approximate()))) {
      row = &x;
      if (!row->board.Approximate()) break;
    }
  if (!row) return "";
  const Option& o = *row->best;
  const HostNeed n = NeedFor(t, o.at, o.per_server, o.servers, static_cast<double>(row->board.MemoryBytes()));
  std::ostringstream out;
  out << "HOST AROUND THE GPUS, for " << row->board.name << " (" << o.per_server << " per server, "
      << RatioFor(n.workload).name << " workload):\n";
  out << "  CPU cores per server  >= " << n.cpu_cores << " = " << n.cpu_formula << "\n";
  out << "  RAM per server        >= " << Gb(n.RamMin()) << " = the GPUs' memory " << Gb(n.ram_floor);
  if (n.ram_offload > 0) out << " + the states the task keeps there " << Gb(n.ram_offload);
  if (n.ram_embeddings > 0) out << " + embedding tables " << Gb(n.ram_embeddings);
  out << "\n";
  if (!n.embeddings_formula.empty()) out << "    embedding tables: " << n.embeddings_formula << "\n";
  out << "  storage               " << Gb(n.Storage()) << " = the model's 16-bit weights "
      << Gb(n.base_weights) << " + " << n.kept << " checkpoint(s) x " << Gb(n.checkpoint)
      << (n.dataset > 0 ? " + dataset " + Gb(n.dataset) : std::string()) << "\n";
  out << "    one checkpoint: " << n.checkpoint_formula << "\n";
  for (const std::string& note : n.notes) out << "  note: " << note << "\n";
  if (verbose) {
    out << "  source of the CPU cores: " << kCpuSource << "\n";
    out << "  source of the RAM floor: " << kRamSource << "\n";
  }
  const std::string shipped = Shipped(o.per_server);
  if (!shipped.empty())
    out << "  " << o.per_server << "-GPU data-center servers ship " << shipped
        << (verbose ? ":\n" : " (--verbose: the servers and their sources)\n");
  if (verbose)
    for (const ReferenceServer& s : ReferenceServers())
      if (s.gpus == o.per_server)
        out << "    " << s.name << ": " << s.cpus << (s.vcpus ? " vCPUs, " : " cores, ") << s.ram_text
            << " RAM" << (s.storage.empty() ? "" : ", " + s.storage) << " (" << s.source << ")\n";
  return out.str();
}

// A snapshot's hostname, GPU names and the texts made from them are another host's word: each is escaped
// where it is printed (util/input.h, TerminalSafe).
std::string RenderVerdictsText(const std::vector<HostVerdict>& v) {
  std::ostringstream out;
  for (const HostVerdict& h : v) {
    out << TerminalSafe(h.label) << " (" << TerminalSafe(h.summary) << "): " << VerdictWord(h);
    if (h.shortfall > 0) out << ", short by " << Gb(h.shortfall) << " per GPU";
    out << "\n";
    for (const HostItem& i : h.items) {
      out << "  " << TerminalSafe(i.what) << ": " << TerminalSafe(i.status);
      if (!i.have.empty()) out << ", has " << TerminalSafe(i.have);
      if (!i.need.empty()) out << ", needs " << TerminalSafe(i.need);
      if (!i.detail.empty()) out << " (" << TerminalSafe(i.detail) << ")";
      out << "\n";
    }
    for (const std::string& n : h.notes) out << "  note: " << TerminalSafe(n) << "\n";
    if (h.option)
      for (const std::string& f : h.option->flags) out << "  " << TerminalSafe(f) << "\n";
  }
  if (v.size() > 1) {
    const auto fit = std::count_if(v.begin(), v.end(), [](const HostVerdict& h) { return h.fits; });
    out << fit << " of " << v.size() << " hosts fit\n";
  }
  return out.str();
}

ordered_json VerdictsJson(const std::vector<HostVerdict>& v) {
  ordered_json out = ordered_json::array();
  for (const HostVerdict& h : v) {
    ordered_json items = ordered_json::array();
    for (const HostItem& i : h.items)
      items.push_back(
          {{"what", i.what}, {"status", i.status}, {"have", i.have}, {"need", i.need}, {"detail", i.detail}});
    ordered_json option = nullptr;
    if (h.option)
      option = {{"gpus", h.option->gpus}, {"strategy", Name(h.option->strategy)},
                {"tp", h.option->tp},     {"per_gpu_bytes", WholeBytes(h.option->at.per_gpu)},
                {"link", h.option->link}, {"flags", h.option->flags}};
    out.push_back({{"host", h.label},
                   {"fits", h.fits},
                   {"verdict", VerdictWord(h)},
                   {"summary", h.summary},
                   {"gpu_memory_bytes", WholeBytes(h.gpu_memory)},
                   {"gpu_memory_from", h.gpu_memory_from},
                   {"shortfall_bytes_per_gpu", WholeBytes(h.shortfall)},
                   {"option", option},
                   {"items", items},
                   {"notes", h.notes}});
  }
  return out;
}

}  // namespace gp::size
