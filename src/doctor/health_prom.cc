// The node_exporter textfile of doctor --health (health_prom.h).
#include "doctor/health_prom.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "util/input.h"

namespace gp::doctor {
namespace {

using verdict::Finding;
using verdict::Status;

const char* const kStatuses[] = {"ok", "warn", "fail", "unknown"};

void Header(std::string& out, const char* name, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
}

std::string Seconds(long long ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", ms / 1000, ms % 1000);
  return buf;
}

std::string Label(const char* name, const std::string& value) {
  return std::string(name) + "=\"" + PrometheusLabelValue(value) + "\"";
}

// watch's GPU labels; all empty for a finding about the host.
std::string GpuLabels(const probe::Gpu* g) {
  return Label("gpu", g ? std::to_string(g->index) : "") + "," + Label("UUID", g ? g->uuid : "") + "," +
         Label("pci_bus_id", g ? g->pci : "") + "," + Label("modelName", g ? g->name : "");
}

// One state-set family member per status: 1 for `status`, 0 for the others.
void StateSet(std::string& out, const std::string& name, const std::string& labels,
              const std::string& status) {
  for (const char* s : kStatuses)
    out += name + "{" + labels + (labels.empty() ? "" : ",") + "status=\"" + s + "\"} " +
           (status == s ? "1" : "0") + "\n";
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// fail > unknown > warn > ok.
std::string Worst(bool fail, bool unknown, bool warn) {
  return fail ? "fail" : unknown ? "unknown" : warn ? "warn" : "ok";
}

bool AnyOf(const std::vector<Finding>& fs, const std::string& cls, const std::string& pci, bool by_gpu) {
  return std::any_of(fs.begin(), fs.end(), [&](const Finding& f) {
    return by_gpu ? f.gpu_pci == pci : HealthClass(f.code) == cls;
  });
}

const char* VerdictName(HealthVerdict::Kind k) {
  switch (k) {
    case HealthVerdict::Kind::kProblem:
      return "problem";
    case HealthVerdict::Kind::kUnknown:
      return "unknown";
    case HealthVerdict::Kind::kOk:
      break;
  }
  return "ok";
}

// Per GPU (by PCI address, "" for the host), class, code and status: how many findings.
using FindingKey = std::tuple<std::string, std::string, std::string, std::string>;

}  // namespace

std::string HealthProm(const HealthVerdict& v, const probe::HostFacts& host,
                       const std::vector<std::string>& classes, const HealthRunTimes& times) {
  std::string out;
  Header(out, "gpuprep_health_verdict",
         "1 for this host's GPU health verdict (ok; problem: a check failed; unknown: a check could not read "
         "what it judges, e.g. NVML answered for no GPU), 0 for the others.");
  for (const char* k : {"ok", "problem", "unknown"})
    out += std::string("gpuprep_health_verdict{verdict=\"") + k + "\"} " +
           (std::string(VerdictName(v.kind)) == k ? "1" : "0") + "\n";

  Header(out, "gpuprep_health_check_status",
         "1 for each health class's status (ok, warn, fail, unknown: not read), 0 for the others.");
  for (const std::string& cls : HealthClasses()) {
    if (!HealthClassChosen(classes, cls)) continue;
    StateSet(out, "gpuprep_health_check_status", Label("class", cls),
             Worst(AnyOf(v.failures, cls, "", false), Has(v.unread, cls), AnyOf(v.warnings, cls, "", false)));
  }

  // A GPU without a failure is unknown when NVML answered for none (its NVML classes were not read).
  const bool nvml_unread =
      std::any_of(v.unread.begin(), v.unread.end(), [](const std::string& c) { return c != "xid"; });
  Header(out, "gpuprep_health_gpu_status",
         "1 for each GPU's worst health status over the chosen classes (ok, warn, fail, unknown), 0 for "
         "the others.");
  for (const probe::Gpu& g : host.gpus)
    StateSet(out, "gpuprep_health_gpu_status", GpuLabels(&g),
             Worst(AnyOf(v.failures, "", g.pci, true), nvml_unread, AnyOf(v.warnings, "", g.pci, true)));

  std::map<FindingKey, unsigned> counts;
  for (const auto* list : {&v.failures, &v.warnings})
    for (const Finding& f : *list)
      ++counts[{f.gpu_pci, HealthClass(f.code), f.code, verdict::StatusName(f.status)}];
  if (!counts.empty())
    Header(out, "gpuprep_health_findings",
           "Failed and warning health findings of each code, per GPU (empty GPU labels: the host's own); "
           "absent when there are none.");
  for (const auto& [key, n] : counts) {
    const auto& [pci, cls, code, status] = key;
    const auto it = std::find_if(host.gpus.begin(), host.gpus.end(),
                                 [&pci = pci](const probe::Gpu& g) { return !pci.empty() && g.pci == pci; });
    out += "gpuprep_health_findings{" + GpuLabels(it == host.gpus.end() ? nullptr : &*it) + "," +
           Label("class", cls) + "," + Label("code", code) + "," + Label("status", status) + "} " +
           std::to_string(n) + "\n";
  }

  Header(out, "gpuprep_health_gpus", "GPUs found on the PCI bus.");
  out += "gpuprep_health_gpus " + std::to_string(host.gpus.size()) + "\n";
  Header(out, "gpuprep_health_last_run_timestamp_seconds",
         "When the health checks last ran (Unix time): alert when it grows old.");
  out += "gpuprep_health_last_run_timestamp_seconds " + Seconds(times.end_ms) + "\n";
  Header(out, "gpuprep_health_run_duration_seconds", "How long the health probe and checks took.");
  out += "gpuprep_health_run_duration_seconds " + Seconds(times.duration_ms) + "\n";
  return out;
}

}  // namespace gp::doctor
