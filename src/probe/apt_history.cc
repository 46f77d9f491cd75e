// apt's history (probe/apt_history.h): the parser, and the probe step that reads history.log and its
// rotations, newest first, until every question is answered.
#include "probe/apt_history.h"

#include "probe/steps.h"
#include "sys/archive.h"
#include "sys/kernel_log.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr size_t kMaxCommandline = 200;
constexpr size_t kMaxFileBytes = 16u << 20;  // per file, its newest part (a busy month is a few hundred KB)
constexpr int kMaxRotations = 12;            // apt's logrotate keeps 12 months

// "name:arch (v1, v2), name2:arch (v)" -> the changes; `second` takes the version after the comma
// (Upgrade, Downgrade: old, new), else the first (Install: "v, automatic"; Remove: "v").
void ParsePackages(std::string_view list, const std::string& action, bool second, AptEntry& e) {
  size_t pos = 0;
  while (pos < list.size() && e.changes.size() < kMaxChangesPerEntry) {
    const size_t open = list.find(" (", pos);
    if (open == std::string_view::npos) return;
    const size_t close = list.find(')', open);
    if (close == std::string_view::npos) return;
    std::string_view name = Trim(list.substr(pos, open - pos));
    if (const size_t colon = name.find(':'); colon != std::string_view::npos) name = name.substr(0, colon);
    const std::vector<std::string> versions = Split(list.substr(open + 2, close - open - 2), ',');
    pos = close + 1;
    if (pos < list.size() && list[pos] == ',') ++pos;
    if (versions.empty() || (second && versions.size() < 2)) continue;
    const std::string version(Trim(versions[second ? 1 : 0]));
    if (!ValidDebName(name) || !ValidDebVersion(version)) continue;
    e.changes.push_back({action, std::string(name), version});
  }
}

// The entry's field `key` ("Upgrade") and its value, when `line` is one.
bool Field(std::string_view line, std::string_view key, std::string_view& value) {
  if (line.size() <= key.size() + 1 || line.substr(0, key.size()) != key || line[key.size()] != ':')
    return false;
  value = Trim(line.substr(key.size() + 1));
  return true;
}

std::string Bounded(std::string_view s) {
  std::string out(s.substr(0, kMaxCommandline));
  return TerminalSafe(ReplaceInvalidUtf8(out));
}

}  // namespace

std::string UpstreamVersion(std::string_view debian_version) {
  std::string_view v = debian_version;
  if (const size_t colon = v.find(':'); colon != std::string_view::npos) v = v.substr(colon + 1);
  if (const size_t dash = v.rfind('-'); dash != std::string_view::npos) v = v.substr(0, dash);
  return std::string(v);
}

bool UnattendedCommandline(std::string_view commandline) {
  const std::vector<std::string> words = SplitWords(commandline);
  for (size_t i = 0; i < words.size() && i < 2; ++i) {
    std::string_view w = words[i];
    if (const size_t slash = w.rfind('/'); slash != std::string_view::npos) w = w.substr(slash + 1);
    if (w == "unattended-upgrade" || w == "unattended-upgrades") return true;
    if (!StartsWith(w, "python")) return false;  // only an interpreter may come before the program
  }
  return false;
}

std::vector<AptEntry> ParseAptHistory(std::string_view text, const std::string& file) {
  static const std::pair<const char*, bool> kActions[] = {{"Install", false}, {"Reinstall", false},
                                                          {"Upgrade", true},  {"Downgrade", true},
                                                          {"Remove", false},  {"Purge", false}};
  std::vector<AptEntry> out;
  size_t number = 0, pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++number;
    std::string_view value;
    if (Field(line, "Start-Date", value)) {
      out.emplace_back();
      out.back().run.date = Bounded(value);
      out.back().run.where = file + ":" + std::to_string(number);
      continue;
    }
    if (out.empty()) continue;  // the cut part of an entry before the first one read
    AptEntry& e = out.back();
    if (Field(line, "Commandline", value)) {
      e.run.commandline = Bounded(value);
      e.run.unattended = UnattendedCommandline(value);
    } else if (Field(line, "Requested-By", value)) {
      e.run.requested_by = Bounded(value);
    } else {
      for (const auto& [action, second] : kActions)
        if (Field(line, action, value)) ParsePackages(value, action, second, e);
    }
  }
  return out;
}

namespace {

// The history files that exist, newest first: history.log, then each rotation, plain or compressed.
std::vector<std::string> HistoryFiles(const sys::Fs& fs) {
  const std::string base = "/var/log/apt/history.log";
  std::vector<std::string> out;
  if (fs.Exists(base)) out.push_back(base);
  for (int i = 1; i <= kMaxRotations; ++i)
    for (const std::string& path : {base + "." + std::to_string(i), base + "." + std::to_string(i) + ".gz"})
      if (fs.Exists(path)) out.push_back(path);
  return out;
}

// One history file's newest kMaxFileBytes, decompressed when it is a .gz; nullopt with a note when it
// cannot be read.
std::optional<std::string> ReadHistory(const sys::Fs& fs, const std::string& path, HostFacts& facts) {
  auto note = [&](const std::string& why) {
    facts.probe_notes.push_back("apt history: " + path + ": " + why);
    return std::nullopt;
  };
  if (!EndsWith(path, ".gz")) {
    const sys::LogRead r = sys::ReadTail(fs.HostPath(path), kMaxFileBytes);
    if (!r.ok) return note(r.error);
    return r.data;
  }
  auto gz = fs.ReadPrefix(path, kMaxFileBytes + 1);
  if (!gz) return note("cannot be read");
  if (gz->size() > kMaxFileBytes) return note("larger than " + std::to_string(kMaxFileBytes) + " bytes");
  sys::Gunzipped g = sys::Gunzip(*gz, kMaxFileBytes);
  if (!g.ok) return note(g.error);
  return std::move(g.data);
}

}  // namespace

void ProbeAptHistory(const ProbeEnv& env, HostFacts& facts) {
  // The questions: the kernels without a module, and the userspace driver when the module differs.
  std::vector<InstalledKernel*> kernels;
  for (auto& k : facts.boot.kernels)
    if (k.modules_dep && k.module_path.empty()) kernels.push_back(&k);
  DriverInfo& d = facts.driver;
  const bool driver =
      d.module.loaded && !d.userspace_version.empty() && d.module.version != d.userspace_version;
  if (kernels.empty() && !driver) return;
  auto answered = [&] {
    for (const InstalledKernel* k : kernels)
      if (!k->installed_by.found()) return false;
    return !driver || d.userspace_moved_by.found();
  };
  for (const std::string& path : HistoryFiles(*env.fs)) {
    const std::optional<std::string> text = ReadHistory(*env.fs, path, facts);
    if (!text) continue;
    const std::vector<AptEntry> entries = ParseAptHistory(*text, path);
    for (InstalledKernel* k : kernels)
      if (!k->installed_by.found())
        k->installed_by = NewestMove(entries, [&](const std::string& name, const std::string&) {
          return name == "linux-image-" + k->release || name == "linux-image-unsigned-" + k->release;
        });
    if (driver && !d.userspace_moved_by.found())
      d.userspace_moved_by = NewestMove(entries, [&](const std::string& name, const std::string& version) {
        return (StartsWith(name, "libnvidia-compute-") || StartsWith(name, "nvidia-driver-") ||
                StartsWith(name, "nvidia-utils-") || name == "libnvidia-compute" || name == "cuda-drivers" ||
                StartsWith(name, "cuda-drivers-")) &&
               UpstreamVersion(version) == d.userspace_version;
      });
    if (answered()) return;
  }
}

}  // namespace gp::probe
