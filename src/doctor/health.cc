// doctor --health's protocols (doctor/health.h): node-problem-detector's exit codes and line, Slurm's drain.
// NPD's custom plugin protocol and defaults (max_output_length 80, timeout 5 s):
// github.com/kubernetes/node-problem-detector, docs/custom_plugin_monitor.md and
// pkg/custompluginmonitor/types/config.go. Slurm's HealthCheckProgram and `scontrol update State=DRAIN
// Reason=...`: slurm.conf(5) and scontrol(1), slurm.schedmd.com.
#include "doctor/health.h"

#include <algorithm>
#include <cctype>

#include "util/health_codes.h"
#include "util/strings.h"

namespace gp::doctor {
bool HealthClassChosen(const std::vector<std::string>& classes, const std::string& cls) {
  return !cls.empty() && (classes.empty() || std::find(classes.begin(), classes.end(), cls) != classes.end());
}

namespace {

using verdict::Finding;
using verdict::Status;

bool NeedsNvml(const std::string& cls) { return cls != "xid"; }

// Printable ASCII only (a byte outside it becomes '?'), at most `max` bytes; "..." marks a cut.
std::string Ascii(const std::string& s, size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (unsigned char c : s) out.push_back(c == '\n' || c == '\t' ? ' ' : (c < 0x20 || c > 0x7e) ? '?' : c);
  if (out.size() > max)
    out = out.substr(0, max >= 3 ? max - 3 : 0) + std::string(std::min<size_t>(max, 3), '.');
  return out;
}

// "CODE: MESSAGE (+N more)" within `max` bytes: the tail is kept whole, the message is cut.
std::string FirstFailure(const HealthVerdict& v, const std::string& sep, size_t max) {
  const Finding& f = v.failures.front();
  const std::string more =
      v.failures.size() > 1 ? " (+" + std::to_string(v.failures.size() - 1) + " more)" : std::string();
  const std::string head = Ascii(f.code, max) + sep;
  if (head.size() + more.size() >= max) return Ascii(head + f.message + more, max);
  return head + Ascii(f.message, max - head.size() - more.size()) + more;
}

std::string Plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

const std::vector<std::string>& HealthClasses() {
  static const std::vector<std::string> kClasses = {"bus", "memory", "clocks", "nvlink", "xid", "recovery"};
  return kClasses;
}

std::string HealthClass(const std::string& code) {
  if (StartsWith(code, "gpu.xid-")) return "xid";
  if (StartsWith(code, "driver.recovery-action")) return "recovery";
  if (StartsWith(code, "gpu.row-remap-") || StartsWith(code, "gpu.ecc-") ||
      code == "gpu.retired-pages-pending")
    return "memory";
  if (StartsWith(code, "gpu.clocks-") || code == "gpu.power-limit-low") return "clocks";
  if (code == "gpu.nvlink-down") return "nvlink";
  static const char* const kBus[] = {"gpu.none",        "gpu.off-bus",          "gpu.unbound",
                                     "gpu.not-in-nvml", health_codes::kGpuLost, "gpu.reset-required",
                                     "gpu.pcie-width",  "gpu.pcie-speed"};
  for (const char* c : kBus)
    if (code == c) return "bus";
  return "";
}

HealthVerdict JudgeHealth(const std::vector<verdict::LayerReport>& reports, const probe::HostFacts& host,
                          const std::vector<std::string>& classes) {
  HealthVerdict v;
  v.gpus = host.gpus.size();
  bool xid_not_read = false;
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      if (f.code == "gpu.xid-not-read") xid_not_read = true;
      if (!HealthClassChosen(classes, HealthClass(f.code))) continue;
      if (f.status == Status::kFail) v.failures.push_back(f);
      if (f.status == Status::kWarn) v.warnings.push_back(f);
    }
  }
  const bool nvml_answered =
      std::any_of(host.gpus.begin(), host.gpus.end(), [](const probe::Gpu& g) { return g.nvml_status; });
  const bool nvml_unread = host.live && !host.gpus.empty() && !nvml_answered;
  bool nvml_chosen = false;
  for (const std::string& c : HealthClasses()) {
    if (!HealthClassChosen(classes, c)) continue;
    nvml_chosen = nvml_chosen || NeedsNvml(c);
    if (NeedsNvml(c) ? nvml_unread : xid_not_read) v.unread.push_back(c);
  }
  if (!v.failures.empty()) {
    v.kind = HealthVerdict::Kind::kProblem;
    return v;
  }
  if (nvml_unread && nvml_chosen) {
    v.kind = HealthVerdict::Kind::kUnknown;
    v.unknown_why =
        "NVML answered for no GPU" +
        (host.driver.nvml_error ? " (" + *host.driver.nvml_error + ")" : std::string(" (driver loaded?)"));
  } else if (xid_not_read && HealthClassChosen(classes, "xid")) {
    v.kind = HealthVerdict::Kind::kUnknown;
    v.unknown_why = "the kernel log could not be read for Xid events";
  }
  return v;
}

int NpdExitCode(const HealthVerdict& v) {
  switch (v.kind) {
    case HealthVerdict::Kind::kOk:
      return 0;
    case HealthVerdict::Kind::kProblem:
      return 1;
    case HealthVerdict::Kind::kUnknown:
      break;
  }
  return 2;
}

std::string NpdLine(const HealthVerdict& v, size_t max_bytes) {
  switch (v.kind) {
    case HealthVerdict::Kind::kProblem:
      return FirstFailure(v, ": ", max_bytes);
    case HealthVerdict::Kind::kUnknown:
      return Ascii("unknown: " + v.unknown_why, max_bytes);
    case HealthVerdict::Kind::kOk:
      break;
  }
  std::string line = "ok: " + Plural(v.gpus, "GPU") + " healthy";
  if (!v.warnings.empty())
    line += ", " + Plural(v.warnings.size(), "warning") + " (" + v.warnings.front().code + ")";
  return Ascii(line, max_bytes);
}

bool ValidSlurmNodeName(const std::string& name) {
  if (name.empty() || name.size() > 64 || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::optional<std::string> SlurmdNodeName(const std::string& slurmd_output) {
  const std::string first = slurmd_output.substr(0, slurmd_output.find('\n'));
  if (!StartsWith(first, "NodeName=")) return std::nullopt;
  std::string name = first.substr(9);
  name = name.substr(0, name.find_first_of(" \t\r"));
  if (name.empty()) return std::nullopt;
  return name;
}

std::string SlurmReason(const HealthVerdict& v) {
  constexpr size_t kMax = 160;
  if (v.kind == HealthVerdict::Kind::kProblem) return FirstFailure(v, " ", kMax - 9).insert(0, "gpuprep: ");
  if (v.kind == HealthVerdict::Kind::kUnknown)
    return Ascii("gpuprep: health unknown: " + v.unknown_why, kMax);
  return "";
}

std::optional<std::vector<std::string>> SlurmDrainArgv(const HealthVerdict& v, const std::string& node) {
  if (v.kind == HealthVerdict::Kind::kOk) return std::nullopt;
  return std::vector<std::string>{"scontrol", "update", "NodeName=" + node, "State=DRAIN",
                                  "Reason=" + SlurmReason(v)};
}

}  // namespace gp::doctor
