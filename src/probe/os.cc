// OS, kernel, architecture, CPUs, memory, /dev/shm and disk.

#include "probe/parsers.h"
#include "probe/steps.h"
#include "sys/host_info.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

// Removes os-release quoting: "..." or '...' with backslash escapes inside double quotes.
std::string UnquoteOsRelease(std::string_view v) {
  v = Trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    char q = v.front();
    v = v.substr(1, v.size() - 2);
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (q == '"' && v[i] == '\\' && i + 1 < v.size()) ++i;
      out += v[i];
    }
    return out;
  }
  return std::string(v);
}

std::optional<uint64_t> SizeWithSuffix(std::string_view s, uint64_t mem_total) {
  if (s.empty()) return std::nullopt;
  uint64_t mult = 1;
  bool percent = false;
  switch (s.back()) {
    case 'k':
    case 'K':
      mult = 1024ULL;
      break;
    case 'm':
    case 'M':
      mult = 1024ULL * 1024;
      break;
    case 'g':
    case 'G':
      mult = 1024ULL * 1024 * 1024;
      break;
    case '%':
      percent = true;
      break;
    default:
      break;
  }
  if (mult != 1 || percent) s.remove_suffix(1);
  auto n = ParseUnsigned(s);
  if (!n) return std::nullopt;
  if (percent) return mem_total / 100 * *n;
  return *n * mult;
}

}  // namespace

OsInfo ParseOsRelease(std::string_view text) {
  OsInfo os;
  for (const auto& line : Split(text, '\n')) {
    auto eq = line.find('=');
    if (eq == std::string::npos || Trim(line).empty() || Trim(line)[0] == '#') continue;
    std::string key(Trim(std::string_view(line).substr(0, eq)));
    std::string value = UnquoteOsRelease(std::string_view(line).substr(eq + 1));
    if (key == "ID")
      os.id = value;
    else if (key == "VERSION_ID")
      os.version_id = value;
    else if (key == "PRETTY_NAME")
      os.pretty_name = value;
    else if (key == "VERSION_CODENAME")
      os.codename = value;
  }
  return os;
}

std::optional<uint64_t> ParseMemTotal(std::string_view text) {
  for (const auto& line : Split(text, '\n')) {
    if (!StartsWith(line, "MemTotal:")) continue;
    auto words = SplitWords(std::string_view(line).substr(9));
    if (words.empty()) return std::nullopt;
    auto n = ParseUnsigned(words[0]);
    if (!n) return std::nullopt;
    bool kb = words.size() > 1 && ToLower(words[1]) == "kb";
    return kb ? *n * 1024 : *n;
  }
  return std::nullopt;
}

int CountCpuinfoProcessors(std::string_view text) {
  int n = 0;
  for (const auto& line : Split(text, '\n')) {
    if (!StartsWith(line, "processor")) continue;
    auto colon = line.find(':');
    if (colon != std::string::npos && Trim(std::string_view(line).substr(0, colon)) == "processor") ++n;
  }
  return n;
}

std::optional<int> CountCpuList(std::string_view text) {
  auto t = Trim(text);
  if (t.empty()) return std::nullopt;
  int count = 0;
  for (const auto& part : Split(t, ',')) {
    auto dash = part.find('-');
    if (dash == std::string::npos) {
      if (!ParseUnsigned(part)) return std::nullopt;
      ++count;
      continue;
    }
    auto lo = ParseUnsigned(std::string_view(part).substr(0, dash));
    auto hi = ParseUnsigned(std::string_view(part).substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    count += static_cast<int>(*hi - *lo + 1);
  }
  return count;
}

std::optional<uint64_t> ParseShmSizeFromMounts(std::string_view mounts, uint64_t mem_total) {
  std::optional<uint64_t> result;
  for (const auto& line : Split(mounts, '\n')) {
    auto f = SplitWords(line);
    if (f.size() < 4 || f[1] != "/dev/shm") continue;
    result.reset();  // the last mount on /dev/shm wins, as it shadows earlier ones
    for (const auto& opt : Split(f[3], ',')) {
      if (StartsWith(opt, "size=")) result = SizeWithSuffix(std::string_view(opt).substr(5), mem_total);
    }
  }
  return result;
}

std::string ArchFromDpkg(std::string_view dpkg_arch) {
  std::string a(Trim(dpkg_arch));
  if (a == "amd64") return "x86_64";
  if (a == "arm64") return "aarch64";
  if (a == "ppc64el") return "ppc64le";
  if (a == "i386") return "i686";
  return a;
}

std::string ArchFromElf(std::string_view h) {
  if (h.size() < 20 || h.substr(0, 4) !=
                           "\x7f"
                           "ELF")
    return "";
  bool little = h[5] == 1;
  auto b0 = static_cast<unsigned char>(h[18]), b1 = static_cast<unsigned char>(h[19]);
  unsigned machine = little ? (b0 | (b1 << 8)) : ((b0 << 8) | b1);
  switch (machine) {
    case 62:
      return "x86_64";
    case 183:
      return "aarch64";
    case 21:
      return little ? "ppc64le" : "ppc64";
    case 3:
      return "i686";
    default:
      return "";
  }
}

void ProbeOs(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  if (auto t = fs.Read("/etc/os-release"))
    facts.os = ParseOsRelease(*t);
  else if (auto u = fs.Read("/usr/lib/os-release"))
    facts.os = ParseOsRelease(*u);
  else
    facts.probe_notes.push_back("os: /etc/os-release not found");

  if (auto k = fs.ReadPrefix("/proc/sys/kernel/osrelease", 256)) facts.kernel = std::string(Trim(*k));
  if (Live(env)) {
    if (auto u = sys::LiveUname()) {
      facts.arch = u->machine;
      if (facts.kernel.empty()) facts.kernel = u->release;
    }
  } else {
    if (auto a = fs.ReadPrefix("/var/lib/dpkg/arch", 256); a && !Trim(*a).empty()) {
      facts.arch = ArchFromDpkg(Split(Trim(*a), '\n')[0]);
    } else if (auto elf = fs.ReadPrefix("/bin/sh", 64)) {
      facts.arch = ArchFromElf(*elf);
    }
  }
  if (facts.kernel.empty())
    facts.probe_notes.push_back("os: kernel release unknown (/proc/sys/kernel/osrelease)");
  if (facts.arch.empty()) facts.probe_notes.push_back("os: architecture unknown");

  if (auto online = fs.ReadPrefix("/sys/devices/system/cpu/online", 4096)) {
    if (auto n = CountCpuList(*online)) facts.cpus = *n;
  }
  if (facts.cpus == 0) {
    if (auto info = fs.Read("/proc/cpuinfo")) facts.cpus = CountCpuinfoProcessors(*info);
  }
  if (facts.cpus == 0) facts.probe_notes.push_back("os: CPU count unknown");

  if (auto mi = fs.ReadPrefix("/proc/meminfo", 4096)) {
    if (auto m = ParseMemTotal(*mi)) facts.memory_bytes = *m;
  }
  if (facts.memory_bytes == 0) facts.probe_notes.push_back("os: MemTotal unknown (/proc/meminfo)");

  if (auto space = fs.Space("/dev/shm")) {
    facts.shm_bytes = space->total_bytes;
  } else if (auto mounts = fs.Read("/proc/mounts")) {
    // tmpfs without size= defaults to half of RAM (Documentation/filesystems/tmpfs.rst).
    auto size = ParseShmSizeFromMounts(*mounts, facts.memory_bytes);
    facts.shm_bytes = size ? *size : facts.memory_bytes / 2;
  } else {
    facts.shm_bytes = facts.memory_bytes / 2;
  }

  if (auto var = fs.Space("/var")) facts.disk_free_bytes = var->avail_bytes;
}

}  // namespace gp::probe
