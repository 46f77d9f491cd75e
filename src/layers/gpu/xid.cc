// gpu layer, the Xid history of the boot (probe/xid.h): each event mapped to its GPU by the log line's PCI
// domain:bus:device, looked up in NVIDIA's Xid catalogue (xid_catalogue.h), and judged by its class and
// NVIDIA's immediate action; repeats of one code on one GPU are one finding with a count and the first and
// last times.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "layers/gpu/health.h"
#include "util/xid_catalogue.h"

namespace gp::layers {
namespace {

struct Group {
  const probe::XidEvent* first = nullptr;
  const probe::XidEvent* last = nullptr;
  size_t count = 0;
};

// The GPU whose PCI function 0 sits at `pci` ("DDDD:BB:DD"), nullptr when the host has none there.
const probe::Gpu* GpuAt(const probe::HostFacts& h, const std::string& pci) {
  for (const auto& g : h.gpus) {
    const auto dot = g.pci.rfind('.');
    if (dot != std::string::npos && g.pci.compare(0, dot, pci) == 0) return &g;
  }
  return nullptr;
}

std::string Who(const probe::Gpu* g, const std::string& pci) {
  if (!g) return "PCI " + pci + " (no GPU of this host at that address)";
  std::string s = GpuLabel(*g);
  if (!g->uuid.empty()) s.insert(s.size() - 1, ", " + g->uuid);
  return s;
}

std::string ResetText(const probe::HostFacts& h, const probe::Gpu* g) {
  return g ? ResetFix(h, *g) : std::string("stop the jobs on the GPU, then sudo nvidia-smi -r -i INDEX");
}

// NVIDIA's resolution token in words; "" for none.
std::string ActionText(const std::string& token, const probe::HostFacts& h, const probe::Gpu* g) {
  const std::string i = g ? std::to_string(g->index) : std::string("INDEX");
  if (token.empty() || token.rfind("N/A", 0) == 0) return "";
  if (token == "RESTART_APP") return "restart the job";
  if (token == "RESET_GPU") return ResetText(h, g);
  if (token == "RESTART_BM") return "drain the node and restart it (sudo reboot)";
  if (token == "RESTART_VM") return "restart the virtual machine";
  if (token == "CONTACT_SUPPORT")
    return "drain the node and report the board to the provider or NVIDIA support";
  if (token.rfind("IGNORE", 0) == 0) return "no action needed";
  if (token == "CHECK_MECHANICALS") return "check the board's power cables and seating";
  if (token == "UPDATE_SWFW") return "update the driver and the GPU's firmware";
  if (token == "CHECK_UVM") return "check the nvidia-uvm module and the job's use of unified memory";
  if (token == "CHECK_APP/CUDA") return "check the job's code and its CUDA calls";
  if (token == "WORKFLOW_XID_13" || token == "WORKFLOW_XID_31")
    return "check the job's code (an illegal address or instruction), e.g. with compute-sanitizer";
  if (token == "WORKFLOW_XID_48")
    return "read the memory error state (nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i " + i +
           "): a pending remap or retirement needs a reset of the GPU, a failed remap a replacement";
  if (token == "WORKFLOW_XID_45")
    return "follow the Xid logged before it; alone, restart nvidia-fabricmanager";
  if (token.rfind("WORKFLOW_NVLINK", 0) == 0)
    return "check the NVLink links (nvidia-smi nvlink -s -i " + i + "), then " + ResetText(h, g) +
           "; if links stay down, drain the node and contact support";
  if (token.rfind("INVESTIGATE_SW", 0) == 0) return "update the driver when a newer release fixes it";
  return "follow NVIDIA's " + token + " procedure";
}

// The investigation after the immediate action, in words; "" when there is none to add.
std::string ThenText(const XidInfo& x, const probe::HostFacts& h, const probe::Gpu* g) {
  const std::string inv = x.investigatory;
  if (inv == "CONTACT_SUPPORT") return "if it recurs, report the board to the provider or NVIDIA support";
  if (std::string(x.immediate) == "WORKFLOW_XID_45") return "";  // the immediate text covers both cases
  const std::string now = ActionText(x.immediate, h, g), then = ActionText(inv, h, g);
  return then == now || then == "no action needed" ? "" : then;
}

std::string FixOf(const XidInfo& x, const probe::HostFacts& h, const probe::Gpu* g) {
  const std::string now = ActionText(x.immediate, h, g), then = ThenText(x, h, g);
  std::string fix =
      now.empty() ? "NVIDIA's catalogue gives no action yet: " + std::string(x.description) : now;
  if (!then.empty()) fix += (then.rfind("if ", 0) == 0 ? "; " : "; then ") + then;
  fix += " (NVIDIA's Xid catalogue: " + std::string(*x.immediate ? x.immediate : "no action");
  if (*x.investigatory) fix += ", then " + std::string(x.investigatory);
  return fix + ")";
}

bool Starts(const char* s, const char* prefix) { return std::string(s).rfind(prefix, 0) == 0; }

// fail where NVIDIA's immediate action is on the GPU or the node; warn where it is to restart the job, to
// ignore it for now, to follow the Xid logged before it, or where the catalogue gives none; ok where both
// actions are to ignore it.
Status StatusOf(const XidInfo& x) {
  if (x.cls == XidClass::kApplication || x.cls == XidClass::kUnused) return Status::kWarn;
  const std::string imm = x.immediate, inv = x.investigatory;
  if (Starts(x.immediate, "IGNORE") && (inv.empty() || Starts(x.investigatory, "IGNORE"))) return Status::kOk;
  if (imm.empty() || imm == "RESTART_APP" || Starts(x.immediate, "IGNORE") || imm == "WORKFLOW_XID_45")
    return Status::kWarn;
  return Status::kFail;
}

std::string Times(const Group& grp) {
  if (grp.count == 1) return "once, at " + grp.first->time;
  return std::to_string(grp.count) + " times, first at " + grp.first->time + ", last at " + grp.last->time;
}

std::string Process(const probe::XidEvent& e) {
  if (e.process.empty() && e.pid.empty()) return "";
  return " (last by " + (e.process.empty() ? std::string("a process") : e.process) +
         (e.pid.empty() ? "" : ", pid " + e.pid) + ")";
}

// What an NVLink event (Xid 144-150) adds: the unit, link and error status its last line names, and what
// NVIDIA's decode of Xid 144-150 says of that combination (xid_catalogue.h).
std::string NvlinkDecodeText(int code, const probe::XidEvent& e) {
  const auto x = DecodeNvlinkXid(code, e.detail);
  if (!x) return "";
  char status[16];
  std::snprintf(status, sizeof status, "0x%08x", x->error_status);
  std::string out = "; its last line: NVLink unit " + x->unit + ", link " + std::to_string(x->link) +
                    ", error status " + status + ", logged " + x->severity;
  if (!x->rule)
    return out + ", a combination NVIDIA's Xid 144-150 decode table (as gpuprep has it) does not list";
  return out + "; NVIDIA's Xid 144-150 decode: " + x->rule->severity + ", immediate action " +
         x->rule->resolution + ", investigatory " + x->rule->investigatory;
}

// What an event finding adds when the history does not reach back to the boot: since when it was read.
std::string Window(const probe::XidLog& log) {
  if (log.from_boot) return "";
  return " (Xid events read since " + (log.oldest.empty() ? std::string("the oldest record") : log.oldest) +
         ", the oldest record read)";
}

void Judge(const probe::HostFacts& h, const std::string& pci, int code, const Group& grp, LayerReport& r) {
  const probe::Gpu* g = GpuAt(h, pci);
  const std::string who = Who(g, pci), n = std::to_string(code);
  const XidInfo* x = FindXid(code);
  if (!x) {
    r.Add(XidHealthCode(code), Status::kWarn,
          who + " logged Xid " + n + ", a code NVIDIA's catalogue (as gpuprep has it) does not list, " +
              Times(grp) + Window(h.xid),
          "read NVIDIA's Xid catalogue for " + n +
              " (docs.nvidia.com/deploy/xid-errors/) and its last line: " + grp.last->detail);
    return;
  }
  const std::string what = "Xid " + n + " (" + x->description + ")";
  if (x->cls == XidClass::kMeta) {
    auto fix = g ? RecoveryFix(h, *g) : std::nullopt;
    const bool known = g && g->health.recovery_action.has_value();
    const bool none = known && *g->health.recovery_action == 0;
    r.Add(
        XidHealthCode(code), none ? Status::kOk : Status::kWarn,
        who + " logged " + what + " " + Times(grp) + Window(h.xid) +
            (none    ? "; the driver's recovery action is now none"
             : known ? "; the driver layer's recovery finding says what it asks for now"
                     : "; the driver's current recovery action could not be read here"),
        fix.value_or("read the driver's recovery action: nvidia-smi -q -i " +
                     (g ? std::to_string(g->index) : std::string("INDEX")) +
                     " | grep -i recovery, and follow it (the driver layer of gpuprep doctor reads it too)"));
    return;
  }
  const Status s = StatusOf(*x);
  if (x->cls == XidClass::kApplication) {
    r.Add(XidHealthCode(code), s,
          who + " logged " + what + " " + Times(grp) + Window(h.xid) + Process(*grp.last) +
              ": the job was at fault, not the GPU",
          FixOf(*x, h, g) + "; the GPU itself needs no action");
    return;
  }
  if (x->cls == XidClass::kUnused) {
    r.Add(XidHealthCode(code), s,
          who + " logged Xid " + n + ", a code NVIDIA lists as unused, " + Times(grp) + Window(h.xid) + ": " +
              grp.last->detail,
          FixOf(*x, h, g));
    return;
  }
  std::string fix = FixOf(*x, h, g);
  if (g && s == Status::kFail) fix = FixFor(h, *g, fix);
  r.Add(XidHealthCode(code), s,
        who + " logged " + what + ", a " + XidClassName(x->cls) + " event, " + Times(grp) + Window(h.xid) +
            Process(*grp.last) + NvlinkDecodeText(code, *grp.last),
        fix);
}

}  // namespace

void CheckXidHistory(const CheckInput& in, LayerReport& r) {
  const probe::XidLog& log = in.host.xid;
  // Not looked for (facts read back from a snapshot, or made by hand): nothing to say.
  if (in.host.gpus.empty() || (!log.read && log.skip_reason.empty())) return;
  if (!log.read) {
    r.Add("gpu.xid-not-read", Status::kSkip,
          "the Xid history was not read: " +
              (log.skip_reason.empty() ? std::string("no source") : log.skip_reason));
    return;
  }
  std::string sources;
  for (const auto& s : log.sources) sources += (sources.empty() ? "" : ", ") + s;
  // from_boot with an oldest time: a --since window that reaches back past this boot's start.
  const std::string window = log.from_boot && log.oldest.empty()
                                 ? "this boot"
                                 : "since " + (log.oldest.empty() ? std::string("the oldest record read")
                                                                  : log.oldest + " (the oldest record read)");
  std::string summary =
      (log.events.empty() ? std::string("no Xid events ")
                          : std::to_string(log.events.size() + log.dropped) + " Xid events ") +
      window + " in " + sources;
  if (!log.from_boot) summary += "; earlier records of this boot were not available";
  for (const auto& note : log.notes) summary += "; " + note;
  r.Add("gpu.xid-history", Status::kOk, summary);
  std::map<std::pair<std::string, int>, Group> groups;  // by PCI address, then code
  for (const auto& e : log.events) {
    Group& grp = groups[{e.pci, e.code}];
    if (!grp.first) grp.first = &e;
    grp.last = &e;
    ++grp.count;
  }
  for (const auto& [key, grp] : groups) {
    const size_t from = r.findings.size();
    Judge(in.host, key.first, key.second, grp, r);
    if (const probe::Gpu* g = GpuAt(in.host, key.first)) MarkGpu(r, from, *g);
  }
}

}  // namespace gp::layers
