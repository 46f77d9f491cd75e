// A GPU process's job from its cgroup path (job.h lists the shapes and their sources).
#include "watch/job.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "util/input.h"
#include "util/strings.h"

namespace gp::watch {
namespace {

constexpr size_t kMaxLines = 64;          // one per hierarchy: v1 has about a dozen controllers
constexpr size_t kMaxPathBytes = 4096;    // PATH_MAX: a longer line is not a kernel's
constexpr size_t kMaxUnitName = 255;      // systemd.unit(5)
constexpr size_t kMaxSlurmIdDigits = 10;  // Slurm job ids are 32-bit
constexpr size_t kMaxReasonBytes = 256;

using Parts = std::vector<std::string_view>;

bool Digits(std::string_view s, size_t max) {
  return !s.empty() && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool Hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool ContainerId(std::string_view s) { return s.size() == 64 && std::all_of(s.begin(), s.end(), Hex); }

// A pod UID, 8-4-4-4-12 hex digits with '-' (cgroupfs) or '_' (systemd) between the groups, as '-'.
std::optional<std::string> PodUid(std::string_view s) {
  if (s.size() != 36) return std::nullopt;
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    const bool sep = i == 8 || i == 13 || i == 18 || i == 23;
    const char c = static_cast<char>(out[i] >= 'A' && out[i] <= 'F' ? out[i] - 'A' + 'a' : out[i]);
    if (sep ? (c != '-' && c != '_') : !Hex(c)) return std::nullopt;
    out[i] = sep ? '-' : c;
  }
  return out;
}

bool UnitName(std::string_view s) {
  if (s.empty() || s.size() > kMaxUnitName) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
           c == '-' || c == '_' || c == '.' || c == '\\' || c == '@';
  });
}

Parts SplitPath(std::string_view path) {
  Parts out;
  for (size_t at = 0; at < path.size();) {
    const size_t slash = path.find('/', at);
    const size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > at) out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The path as it is kept: at most kMaxJobPathBytes of it, control characters and ill-formed bytes
// written visibly (util/input.h, TerminalSafe).
std::string CleanPath(std::string_view path) {
  if (path.size() <= kMaxJobPathBytes) return TerminalSafe(path);
  return TerminalSafe(path.substr(0, kMaxJobPathBytes)) + "...";
}

Job Make(const char* kind, std::string id, std::string_view path) {
  Job j;
  j.kind = kind;
  j.id = std::move(id);
  j.cgroup = CleanPath(path);
  return j;
}

std::optional<Job> Slurm(const Parts& c, std::string_view path) {
  for (size_t i = 0; i < c.size(); ++i) {
    // v1: slurm[_node]/uid_U/job_J
    if ((c[i] == "slurm" || StartsWith(c[i], "slurm_")) && i + 2 < c.size() && StartsWith(c[i + 1], "uid_") &&
        Digits(c[i + 1].substr(4), kMaxSlurmIdDigits) && StartsWith(c[i + 2], "job_") &&
        Digits(c[i + 2].substr(4), kMaxSlurmIdDigits))
      return Make("slurm", std::string(c[i + 2].substr(4)), path);
    // v2: [node_]slurmstepd.scope/job_J
    if ((c[i] == "slurmstepd.scope" || EndsWith(c[i], "_slurmstepd.scope")) && i + 1 < c.size() &&
        StartsWith(c[i + 1], "job_") && Digits(c[i + 1].substr(4), kMaxSlurmIdDigits))
      return Make("slurm", std::string(c[i + 1].substr(4)), path);
  }
  return std::nullopt;
}

std::optional<Job> Pod(const Parts& c, std::string_view path) {
  bool under_kubepods = false;
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string_view p = c[i];
    if (StartsWith(p, "kubepods")) under_kubepods = true;
    // systemd driver: kubepods[-qos]-pod<uid>.slice
    if (StartsWith(p, "kubepods") && EndsWith(p, ".slice")) {
      const std::string_view name = p.substr(0, p.size() - 6);
      const size_t dash = name.rfind("-pod");
      if (dash != std::string_view::npos)
        if (auto uid = PodUid(name.substr(dash + 4))) return Make("kubernetes_pod", *uid, path);
    }
    // cgroupfs driver: /kubepods/[qos/]pod<uid>
    if (under_kubepods && StartsWith(p, "pod"))
      if (auto uid = PodUid(p.substr(3))) return Make("kubernetes_pod", *uid, path);
  }
  return std::nullopt;
}

std::optional<Job> Container(const Parts& c, std::string_view path) {
  struct Scope {
    const char* prefix;
    const char* kind;
  };
  static const Scope kScopes[] = {
      {"docker-", "docker"}, {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}, {"libpod-", "podman"}};
  for (size_t i = 0; i < c.size(); ++i) {
    for (const Scope& s : kScopes) {
      const std::string_view prefix = s.prefix;
      if (StartsWith(c[i], prefix) && EndsWith(c[i], ".scope")) {
        const std::string_view id = c[i].substr(prefix.size(), c[i].size() - prefix.size() - 6);
        if (ContainerId(id)) return Make(s.kind, std::string(id), path);
      }
    }
    if (c[i] == "docker" && i + 1 < c.size() && ContainerId(c[i + 1]))
      return Make("docker", std::string(c[i + 1]), path);
    if (c[i] == "libpod_parent" && i + 1 < c.size() && StartsWith(c[i + 1], "libpod-") &&
        ContainerId(c[i + 1].substr(7)))
      return Make("podman", std::string(c[i + 1].substr(7)), path);
  }
  return std::nullopt;
}

std::optional<Job> Unit(const Parts& c, std::string_view path) {
  for (size_t i = c.size(); i-- > 0;)
    if ((EndsWith(c[i], ".service") || EndsWith(c[i], ".scope")) && UnitName(c[i]))
      return Make("systemd", std::string(c[i]), path);
  return std::nullopt;
}

// The cgroup paths of the text: the v2 one first, then the v1 ones in file order.
std::vector<std::string_view> Paths(std::string_view text) {
  std::vector<std::string_view> v1;
  std::optional<std::string_view> v2;
  size_t lines = 0;
  for (size_t at = 0; at < text.size() && lines < kMaxLines; ++lines) {
    const size_t nl = text.find('\n', at);
    const std::string_view line =
        text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos || !Digits(line.substr(0, a), 10)) continue;
    const std::string_view path = line.substr(b + 1);
    if (path.empty() || path[0] != '/' || path.size() > kMaxPathBytes) continue;
    if (line.substr(0, a) == "0" && b == a + 1)
      v2 = path;
    else
      v1.push_back(path);
  }
  std::vector<std::string_view> out;
  if (v2) out.push_back(*v2);
  out.insert(out.end(), v1.begin(), v1.end());
  return out;
}

bool Clean(std::string_view s, size_t max) {
  return s.size() <= max && !InvalidUtf8At(s) && !ControlCharAt(s);
}

}  // namespace

Job UnknownJob(const std::string& reason) {
  Job j;
  j.kind = "unknown";
  j.reason = reason.size() > kMaxReasonBytes ? TerminalSafe(reason.substr(0, kMaxReasonBytes))
                                             : TerminalSafe(reason);
  return j;
}

Job JobFromProcCgroup(std::string_view text) {
  const std::vector<std::string_view> paths = Paths(text.substr(0, kMaxProcCgroupBytes));
  if (paths.empty()) return UnknownJob("no cgroup line in /proc/PID/cgroup");
  std::vector<Parts> parts;
  parts.reserve(paths.size());
  for (std::string_view p : paths) parts.push_back(SplitPath(p));
  for (size_t i = 0; i < paths.size(); ++i) {
    if (auto j = Slurm(parts[i], paths[i])) return *j;
    if (auto j = Pod(parts[i], paths[i])) return *j;
    if (auto j = Container(parts[i], paths[i])) return *j;
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (auto j = Unit(parts[i], paths[i])) return *j;
  for (std::string_view p : paths)
    if (p != "/") return Make("cgroup", CleanPath(p), p);
  return Make("cgroup", "/", "/");
}

std::string CheckJob(const Job& j) {
  const size_t max_path = 4 * kMaxJobPathBytes + 3;  // every byte written \xNN, then "..."
  if (!Clean(j.cgroup, max_path)) return "cgroup: too long, or holds control characters";
  if (!Clean(j.reason, 4 * kMaxReasonBytes)) return "reason: too long, or holds control characters";
  if (j.kind == "unknown") return j.id.empty() && !j.reason.empty() ? "" : "unknown: an id, or no reason";
  if (!j.reason.empty()) return "reason: only for kind unknown";
  if (j.kind == "slurm") return Digits(j.id, kMaxSlurmIdDigits) ? "" : "id: not a Slurm job id";
  if (j.kind == "kubernetes_pod") return PodUid(j.id) == j.id ? "" : "id: not a pod UID";
  if (j.kind == "docker" || j.kind == "containerd" || j.kind == "cri-o" || j.kind == "podman")
    return ContainerId(j.id) ? "" : "id: not a 64-hex-digit container id";
  if (j.kind == "systemd") return UnitName(j.id) ? "" : "id: not a systemd unit name";
  if (j.kind == "cgroup")
    return !j.id.empty() && j.id[0] == '/' && Clean(j.id, max_path) ? "" : "id: not a cgroup path";
  return "kind: not slurm, kubernetes_pod, docker, containerd, cri-o, podman, systemd, cgroup or unknown";
}

std::string JobLabel(const Job& j) {
  if (j.kind == "unknown") return "unknown (" + TerminalSafe(j.reason) + ")";
  if (j.kind == "slurm") return "slurm job " + TerminalSafe(j.id);
  if (j.kind == "kubernetes_pod") return "kubernetes pod " + TerminalSafe(j.id);
  if (ContainerId(j.id)) return TerminalSafe(j.kind) + " " + j.id.substr(0, 12);
  return TerminalSafe(j.kind) + " " + TerminalSafe(j.id);
}

}  // namespace gp::watch
