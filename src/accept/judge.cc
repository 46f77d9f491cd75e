#include "accept/judge.h"

#include <algorithm>
#include <map>
#include <set>

#include "accept/burn.h"
#include "accept/format.h"
#include "accept/judge_nodes.h"

namespace gp::accept {
namespace {

std::string Link(int gen, int width) { return "Gen" + std::to_string(gen) + " x" + std::to_string(width); }

// The link a GPU should train at: the board's maximum, or the port above it where that is lower.
std::pair<int, int> ExpectedLink(const GpuInfo& g) {
  int gen = g.pcie_max_gen, width = g.pcie_max_width;
  if (g.upstream_max_gen > 0) gen = std::min(gen, g.upstream_max_gen);
  if (g.upstream_max_width > 0) width = std::min(width, g.upstream_max_width);
  return {gen, width};
}

const GpuInfo* GpuAt(const Recording& rec, int index) {
  for (const auto& g : rec.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

// The matmul phase of a GPU: the one phase that reads the link while the GPU is loaded.
const Phase* LoadedPhase(const Recording& rec, int gpu) {
  for (const auto& p : rec.phases)
    if (p.phase == "matmul_bf16" && p.gpu == gpu && p.pcie_gen_current && p.pcie_width_current) return &p;
  return nullptr;
}

const char* GroupOf(const std::string& phase) {
  if (phase == "matmul_bf16") return "compute";
  if (phase == "hbm_copy") return "memory";
  if (phase == "h2d" || phase == "d2h") return "host-device";
  if (phase == "p2p") return "peer";
  return "collective";
}

struct Key {
  std::string device, topology;
  int gpus = 0;
};

// The median of the same phase on the other GPUs, for the phases the outlier rule covers, when two or
// more peers were measured.
std::optional<double> PeerMedian(const Recording& rec, const Phase& p) {
  if (p.phase != "matmul_bf16" && p.phase != "hbm_copy" && p.phase != "h2d" && p.phase != "d2h")
    return std::nullopt;
  std::vector<double> peers;
  for (const auto& o : rec.phases)
    if (o.phase == p.phase && o.gpu >= 0 && o.gpu != p.gpu) peers.push_back(o.value);
  if (peers.size() < 2) return std::nullopt;
  std::sort(peers.begin(), peers.end());
  const size_t n = peers.size();
  return n % 2 ? peers[n / 2] : (peers[n / 2 - 1] + peers[n / 2]) / 2;
}

void Copy(std::optional<Value>& to, const Value* v) {
  if (v) to = *v;
}

Check PhaseCheck(const Recording& rec, const Table& t, const Key& key, const Phase& p, double outlier_pct) {
  Check c;
  c.group = GroupOf(p.phase);
  c.name = p.phase;
  c.gpu = p.gpu;
  c.peer = p.phase == "p2p" ? p.peer : -1;
  c.measured = p.value;
  c.unit = p.phase == "matmul_bf16" ? "TFLOP/s" : p.phase == "hbm_copy" ? "TB/s" : "GB/s";
  std::string quantity = p.phase, peak_quantity = p.phase;
  double peak_scale = 1;
  if (p.phase == "h2d" || p.phase == "d2h") {
    const GpuInfo* g = GpuAt(rec, p.gpu);
    const auto [gen, width] = ExpectedLink(*g);
    (void)width;
    quantity = p.phase + "_gen" + std::to_string(gen);
    peak_quantity = quantity;
    if (const Phase* loaded = LoadedPhase(rec, p.gpu)) {  // the link it ran on bounds it
      peak_quantity = p.phase + "_gen" + std::to_string(*loaded->pcie_gen_current);
      peak_scale = *loaded->pcie_width_current / 16.0;
    }
  }
  const Value* typical = t.Find(key.device, key.gpus, key.topology, quantity, "typical");
  const Value* floor = t.Find(key.device, key.gpus, key.topology, quantity, "floor");
  Value peak_value;
  const Value* peak = t.Find(key.device, key.gpus, key.topology, peak_quantity, "peak");
  if (peak && peak_scale != 1) {
    peak_value = *peak;
    peak_value.value *= peak_scale;
    peak = &peak_value;
  }
  Copy(c.typical, typical);
  Copy(c.floor, floor);
  Copy(c.peak, peak);
  // Bus bandwidth grows with the message: a level its source measured at a larger message still holds when
  // the measurement reaches it, but a measurement below it is inconclusive.
  std::string note;
  if (p.phase == "all_reduce") {
    c.size = p.bytes;
    for (const Value** level : {&typical, &floor}) {
      if (!*level || (*level)->size <= p.bytes || p.value >= (*level)->value) continue;
      note += (note.empty() ? "" : "; ") + std::string("below the ") + (*level)->level + " " +
              FormatFigure((*level)->value) + ", which its source measured at " +
              std::to_string((*level)->size) + " bytes, not " + std::to_string(p.bytes) + ": not judged";
      *level = nullptr;
    }
    if (!note.empty() && !typical && !floor && !(peak && p.value > peak->value)) {
      c.status = Status::kSkipped;
      c.reason = note;
      return c;
    }
  }
  c.status = JudgeValue(p.value, typical, floor, peak, PeerMedian(rec, p), outlier_pct, &c.reason);
  if (!note.empty()) c.reason += (c.reason.empty() ? "" : "; ") + note;
  return c;
}

void LinkChecks(const Recording& rec, const Options& o, const Key& key, std::vector<Check>& out) {
  const auto found = o.nvlink_links.find(key.device);
  const Value* links = found == o.nvlink_links.end() ? nullptr : &found->second;
  for (const auto& g : rec.gpus) {
    Check c;
    c.group = "links";
    c.name = "pcie";
    c.gpu = g.index;
    const auto [gen, width] = ExpectedLink(g);
    c.expected = Link(gen, width);
    if (const Phase* p = LoadedPhase(rec, g.index)) {
      c.found = Link(*p->pcie_gen_current, *p->pcie_width_current);
      const bool ok = *p->pcie_gen_current >= gen && *p->pcie_width_current >= width;
      c.status = ok ? Status::kPass : Status::kFail;
      if (!ok) c.reason = "the link trained below min(the board's maximum, the upstream port's maximum)";
    } else {
      c.status = Status::kSkipped;
      c.reason = "the link was not read under load (an idle link is never judged)";
    }
    out.push_back(c);

    Check n;
    n.group = "links";
    n.name = "nvlink";
    n.gpu = g.index;
    Copy(n.peak, links);
    if (key.topology == "pcie") {
      n.status = Status::kNotApplicable;
      n.reason = "a PCIe-only server";
    } else if (!links) {
      n.status = Status::kSkipped;
      n.reason = "links: not judged (no sourced link count for this board)";
    } else if (!g.nvlink_links_up) {
      n.status = Status::kSkipped;
      n.reason = "the links were not read";
    } else {
      n.found = std::to_string(*g.nvlink_links_up) + " up";
      n.expected = FormatFigure(links->value);
      n.status = *g.nvlink_links_up >= static_cast<int>(links->value) ? Status::kPass : Status::kFail;
      if (n.status == Status::kFail) n.reason = "fewer NVLink links up than the board has";
    }
    out.push_back(n);
  }
}

// A quantity the table expects for this server that the recording has no phase of: skipped, never passed.
void UnmeasuredChecks(const Recording& rec, const Table& t, const Key& key, std::vector<Check>& out) {
  const int gen = rec.gpus.empty() ? 0 : ExpectedLink(rec.gpus.front()).first;
  for (const std::string phase : {"matmul_bf16", "hbm_copy", "h2d", "d2h", "p2p", "all_reduce"}) {
    const std::string quantity =
        phase == "h2d" || phase == "d2h" ? phase + "_gen" + std::to_string(gen) : phase;
    const Value* typical = t.Find(key.device, key.gpus, key.topology, quantity, "typical");
    const Value* floor = t.Find(key.device, key.gpus, key.topology, quantity, "floor");
    if (!typical && !floor) continue;
    if (std::any_of(rec.phases.begin(), rec.phases.end(), [&](const Phase& p) { return p.phase == phase; }))
      continue;
    Check c;
    c.group = GroupOf(phase);
    c.name = phase;
    Copy(c.typical, typical);
    Copy(c.floor, floor);
    c.status = Status::kSkipped;
    c.reason = "not measured";
    out.push_back(c);
  }
}

Check FabricCheck(const Recording& rec, const Key& key) {
  Check c;
  c.group = "links";
  c.name = "fabric";
  if (key.topology != "nvswitch") {
    c.status = Status::kNotApplicable;
    c.reason = "no NVSwitch fabric";
    return c;
  }
  std::vector<std::string> problems;
  std::set<std::pair<int, int>> missing;
  for (const auto& g : rec.gpus) {
    if (g.fabric_complete == std::optional<bool>(false))
      problems.push_back("GPU " + std::to_string(g.index) + ": fabric state not completed");
    for (const auto& o : rec.gpus) {
      if (o.index == g.index) continue;
      if (std::find(g.nvlink_p2p_peers.begin(), g.nvlink_p2p_peers.end(), o.index) ==
          g.nvlink_p2p_peers.end())
        missing.insert({std::min(g.index, o.index), std::max(g.index, o.index)});
    }
  }
  if (!missing.empty()) {
    std::string pairs;
    for (const auto& [a, b] : missing)
      pairs += (pairs.empty() ? "" : ", ") + std::to_string(a) + "-" + std::to_string(b);
    problems.push_back("no NVLink peer-to-peer between " + pairs);
  }
  c.found = problems.empty() ? "complete" : "incomplete";
  c.expected = "complete";
  c.status = problems.empty() ? Status::kPass : Status::kFail;
  for (const auto& p : problems) c.reason += (c.reason.empty() ? "" : "; ") + p;
  return c;
}

Check Inv(const std::string& name, bool ok, const std::string& found, const std::string& expected) {
  Check c;
  c.group = "inventory";
  c.name = name;
  c.found = found;
  c.expected = expected;
  c.status = ok ? Status::kPass : Status::kFail;
  return c;
}

std::string Bytes(uint64_t b) { return FormatFigure(static_cast<double>(b) / 1e12) + " TB"; }

void InventoryChecks(const Recording& rec, const std::optional<Offer>& offer, std::vector<Check>& out) {
  if (!offer) {
    Check c;
    c.group = "inventory";
    c.name = "inventory";
    c.status = Status::kNotApplicable;
    c.reason = "no offer given (--expect)";
    out.push_back(c);
    return;
  }
  const Offer& o = *offer;
  const int n = static_cast<int>(rec.gpus.size());
  if (o.gpus) out.push_back(Inv("gpu count", n >= o.gpus, std::to_string(n), std::to_string(o.gpus)));
  if (!o.pci_ids.empty()) {
    std::string wrong;
    for (const auto& g : rec.gpus)
      if (std::find(o.pci_ids.begin(), o.pci_ids.end(), g.pci_device_id) == o.pci_ids.end())
        wrong += (wrong.empty() ? "GPU " : ", GPU ") + std::to_string(g.index) + " is " + g.pci_device_id;
    out.push_back(Inv("board", wrong.empty(), wrong.empty() ? o.board : wrong, o.board));
  }
  if (!o.pci_ids.empty()) {
    Check c = Inv("gpu memory", true, "",
                  o.board_mib
                      ? std::to_string(static_cast<uint64_t>(kSizeMatch * static_cast<double>(o.board_mib))) +
                            " MiB or more"
                      : "");
    if (!o.board_mib) {
      c.status = Status::kSkipped;
      c.reason = "the catalogue has no usable memory for this board";
    } else {
      uint64_t least = UINT64_MAX;
      for (const auto& g : rec.gpus) least = std::min(least, g.memory_total_mib);
      c.found = std::to_string(least) + " MiB (least of the GPUs)";
      c.status = static_cast<double>(least) >= kSizeMatch * static_cast<double>(o.board_mib) ? Status::kPass
                                                                                             : Status::kFail;
    }
    out.push_back(c);
  }
  if (o.cpus)
    out.push_back(Inv("cpus", rec.run.cpus >= o.cpus, std::to_string(rec.run.cpus), std::to_string(o.cpus)));
  if (o.ram_bytes)
    out.push_back(Inv("ram",
                      static_cast<double>(rec.run.ram_bytes) >= kSizeMatch * static_cast<double>(o.ram_bytes),
                      Bytes(rec.run.ram_bytes), Bytes(o.ram_bytes)));
  if (o.nvme_count) {
    int big = 0;
    for (uint64_t b : rec.run.nvme_bytes)
      if (static_cast<double>(b) >= kSizeMatch * static_cast<double>(o.nvme_bytes)) ++big;
    out.push_back(Inv("nvme", big >= o.nvme_count,
                      std::to_string(big) + " of " + Bytes(o.nvme_bytes) + " or more",
                      std::to_string(o.nvme_count) + "x " + Bytes(o.nvme_bytes)));
  }
}

}  // namespace

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass:
      return "pass";
    case Status::kWarn:
      return "warn";
    case Status::kFail:
      return "fail";
    case Status::kSkipped:
      return "skipped";
    case Status::kNotApplicable:
      return "not applicable";
    case Status::kInvalid:
      return "invalid-measurement";
    case Status::kNoExpectation:
      return "no expectation";
  }
  return "?";
}

Status JudgeValue(double measured, const Value* typical, const Value* floor, const Value* peak,
                  std::optional<double> median, double outlier_pct, std::string* reason) {
  reason->clear();
  if (peak && measured > peak->value) {
    *reason = "above the physical peak " + FormatFigure(peak->value) + " " + peak->unit +
              ": a timing error (a missing synchronize), not a fast GPU";
    return Status::kInvalid;
  }
  if (!typical && !floor) {
    *reason = "no expectation for this board, GPU count and topology";
    return Status::kNoExpectation;
  }
  if (floor && measured < floor->value) {
    *reason = "below the floor " + FormatFigure(floor->value) + " " + floor->unit;
    return Status::kFail;
  }
  if (median && measured < *median * (1 - outlier_pct / 100)) {
    *reason = FormatFigure(100 * (1 - measured / *median)) + "% below the median of its peers (" +
              FormatFigure(*median) + "); --outlier is " + FormatFigure(outlier_pct) + "%";
    return Status::kFail;
  }
  if (typical && measured < typical->value) {
    *reason = "below typical " + FormatFigure(typical->value) + " " + typical->unit;
    return Status::kWarn;
  }
  return Status::kPass;
}

Result Judge(const Recording& rec, const Table& table, const Options& options) {
  Result r;
  Key key;
  key.device = rec.gpus.empty() ? "" : rec.gpus.front().pci_device_id;
  for (const auto& g : rec.gpus)
    if (g.pci_device_id != key.device) key.device = "mixed";
  key.gpus = static_cast<int>(rec.gpus.size());
  key.topology = rec.run.topology;
  InventoryChecks(rec, options.offer, r.checks);
  if (rec.nodes) {  // a check across nodes measures the network between them, nothing of one server
    for (auto& c : NodesChecks(rec)) r.checks.push_back(std::move(c));
    Tally(r);
    return r;
  }
  LinkChecks(rec, options, key, r.checks);
  r.checks.push_back(FabricCheck(rec, key));
  for (const auto& p : rec.phases) r.checks.push_back(PhaseCheck(rec, table, key, p, options.outlier_pct));
  UnmeasuredChecks(rec, table, key, r.checks);
  for (auto& c : BurnChecks(rec)) r.checks.push_back(std::move(c));
  Tally(r);
  return r;
}

void Tally(Result& r) {
  r.failed = r.warned = r.incomplete = 0;
  for (const auto& c : r.checks) {
    if (c.status == Status::kFail || c.status == Status::kInvalid) ++r.failed;
    if (c.status == Status::kWarn) ++r.warned;
    if (c.status == Status::kSkipped || c.status == Status::kNoExpectation) ++r.incomplete;
  }
  r.verdict = r.failed ? "fail" : r.incomplete ? "incomplete" : "pass";
}

int ExitCodeFor(const Result& r, bool strict) {
  if (r.failed) return 1;
  return strict && r.incomplete ? 1 : 0;
}

}  // namespace gp::accept
