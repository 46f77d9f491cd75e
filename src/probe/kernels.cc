// Every installed kernel and the nvidia module each would load, and which one GRUB boots next. Cheap sources
// only: modules.dep, the DKMS tree and its make.log, file names; no module is decompressed.
#include <algorithm>

#include "probe/boot.h"
#include "probe/steps.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

constexpr size_t kMaxModulesDep = 32u << 20;  // a distribution kernel's is about 1 MB
constexpr size_t kMaxMakeLog = 4u << 20;
constexpr size_t kMaxGrubCfg = 4u << 20;
constexpr size_t kMaxSmallFile = 64u << 10;  // grubenv is 1 KiB; /etc/default/grub a few
constexpr size_t kMaxKernels = 256;
const char* const kDkms = "/var/lib/dkms/nvidia";

// A machine name as DKMS names its directories ("x86_64", "aarch64").
bool ValidArch(const std::string& a) {
  if (a.empty() || a.size() > 32) return false;
  for (char c : a)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// A modules.dep key for the nvidia module: updates/dkms/nvidia.ko or kernel/.../nvidia.ko, plain or
// compressed as Ubuntu and DKMS do.
bool NvidiaKey(std::string_view key) {
  for (std::string_view ext : {"nvidia.ko", "nvidia.ko.zst", "nvidia.ko.xz"}) {
    if (key == std::string("updates/dkms/") + std::string(ext)) return true;
    if (StartsWith(key, "kernel/") && EndsWith(key, "/" + std::string(ext)) &&
        key.find("/../") == std::string_view::npos)
      return true;
  }
  return false;
}

// The installed kernels: dpkg's linux-image-K, then /boot/vmlinuz-K; each name validated.
std::vector<InstalledKernel> ListKernels(const sys::Fs& fs, const HostFacts& facts) {
  std::vector<InstalledKernel> out;
  auto add = [&](const std::string& k, const char* source) {
    if (!ValidKernelRelease(k) || out.size() >= kMaxKernels) return;
    for (const auto& have : out)
      if (have.release == k) return;
    InstalledKernel ik;
    ik.release = k;
    ik.source = source;
    out.push_back(std::move(ik));
  };
  for (const auto& k : facts.kernel_images) add(k, "dpkg");
  for (const auto& name : fs.List("/boot"))
    if (StartsWith(name, "vmlinuz-")) add(name.substr(8), "boot");
  std::sort(out.begin(), out.end(),
            [](const InstalledKernel& a, const InstalledKernel& b) { return a.release < b.release; });
  return out;
}

// The DKMS nvidia versions (directories named by a version), newest first.
std::vector<std::string> DkmsVersions(const sys::Fs& fs) {
  std::vector<std::pair<Version, std::string>> found;
  for (const auto& name : fs.List(kDkms))
    if (auto v = Version::Parse(name); v && v->size() >= 2 && name.size() <= 32) found.emplace_back(*v, name);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  out.reserve(found.size());
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// The DKMS side of kernel `k`: the newest version with a directory for it, and its make.log when it has one
// (<ver>/<k>/<arch>/log/make.log).
void ReadDkms(const sys::Fs& fs, const std::vector<std::string>& versions, InstalledKernel& k) {
  for (const auto& ver : versions) {
    const std::string dir = std::string(kDkms) + "/" + ver + "/" + k.release;
    if (!fs.IsDir(dir)) continue;
    k.dkms_version = ver;
    for (const auto& arch : fs.List(dir)) {
      if (!ValidArch(arch)) continue;
      const std::string log = dir + "/" + arch + "/log/make.log";
      if (auto text = fs.ReadPrefix(log, kMaxMakeLog)) {
        k.dkms_log = log;
        k.dkms_error = LastErrorLine(*text);
        break;
      }
    }
    return;
  }
}

void ReadModule(const sys::Fs& fs, InstalledKernel& k) {
  const std::string base = "/lib/modules/" + k.release;
  k.headers = ExistsInRoot(fs, base + "/build");
  auto dep = fs.ReadPrefix(base + "/modules.dep", kMaxModulesDep + 1);
  // A kernel's modules.dep lists its in-tree modules too: an empty one is a tree depmod never ran over.
  if (!dep || dep->size() > kMaxModulesDep || dep->find(':') == std::string::npos) return;
  k.modules_dep = true;
  std::string path = NvidiaInModulesDep(*dep);
  if (path.empty() || !fs.Exists(base + "/" + path)) return;
  k.module_path = path;
  if (StartsWith(path, "updates/dkms/")) k.module_version = k.dkms_version;
  if (!k.module_version.empty()) {
    if (auto v = Version::Parse(k.module_version)) k.module_branch = static_cast<int>(v->major());
  } else {
    k.module_branch = BranchFromModulePath(path);
  }
}

std::optional<std::string> ReadSmall(const sys::Fs& fs, const std::string& path) {
  return fs.ReadPrefix(path, kMaxSmallFile);
}

// GRUB_DEFAULT as update-grub reads it: /etc/default/grub, then /etc/default/grub.d/*.cfg in order.
// nullopt when a shell expansion makes it unknowable; "" when unset.
std::optional<std::string> GrubDefaultSetting(const sys::Fs& fs) {
  std::optional<std::string> value = std::string();
  std::vector<std::string> files = {"/etc/default/grub"};
  for (const auto& name : fs.List("/etc/default/grub.d"))
    if (EndsWith(name, ".cfg")) files.push_back("/etc/default/grub.d/" + name);
  for (const auto& f : files) {
    auto text = ReadSmall(fs, f);
    if (!text) continue;
    bool set = false;
    auto v = ParseGrubDefaultVar(*text, &set);
    if (set) value = v;
  }
  return value;
}

// Which kernel GRUB boots next, following its own order: grubenv's one-shot next_entry, else grub.cfg's
// default (GRUB_DEFAULT when grub.cfg names none), `saved` meaning grubenv's saved_entry.
void NextBoot(const sys::Fs& fs, BootInfo& boot) {
  auto cfg = fs.ReadPrefix("/boot/grub/grub.cfg", kMaxGrubCfg + 1);
  if (!cfg || cfg->size() > kMaxGrubCfg) {
    boot.next_detail = fs.Exists("/boot/grub/grub.cfg") ? "/boot/grub/grub.cfg cannot be read"
                                                        : "no /boot/grub/grub.cfg (another boot loader?)";
    return;
  }
  const GrubMenu menu = ParseGrubCfg(*cfg);
  const std::string env = ReadSmall(fs, "/boot/grub/grubenv").value_or("");
  std::string spec, how;
  if (std::string next = GrubEnvVar(env, "next_entry"); !next.empty()) {
    spec = next;
    how = "grubenv's one-shot next_entry";
  } else {
    std::optional<std::string> setting;
    if (menu.default_found) {
      setting = menu.default_value == "${saved_entry}" ? "saved" : menu.default_value;
      how = "grub.cfg's default";
    } else {
      setting = GrubDefaultSetting(fs);
      how = "GRUB_DEFAULT";
    }
    if (!setting || setting->find('$') != std::string::npos) {
      boot.next_detail = how + " is set by the shell: it cannot be read";
      return;
    }
    spec = *setting;
    if (spec == "saved") {
      spec = GrubEnvVar(env, "saved_entry");
      how += " (saved: grubenv's saved_entry)";
    }
  }
  const GrubEntry* e = ResolveGrubEntry(menu, spec);
  const std::string shown = "\"" + TerminalSafe(spec.empty() ? "0" : spec.substr(0, 200)) + "\"";
  if (!e || e->kernel.empty()) {
    boot.next_detail = how + " " + shown + " names no Linux entry of /boot/grub/grub.cfg";
    return;
  }
  boot.next_kernel = e->kernel;
  boot.next_detail = how + " " + shown;
}

}  // namespace

std::string NvidiaInModulesDep(std::string_view modules_dep) {
  std::string packaged;
  size_t pos = 0;
  while (pos < modules_dep.size()) {
    size_t nl = modules_dep.find('\n', pos);
    if (nl == std::string_view::npos) nl = modules_dep.size();
    std::string_view line = modules_dep.substr(pos, nl - pos);
    pos = nl + 1;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    if (StartsWith(key, "/lib/modules/")) {  // an absolute key: drop /lib/modules/K/
      auto slash = key.find('/', 13);
      if (slash == std::string_view::npos) continue;
      key.remove_prefix(slash + 1);
    }
    if (key.size() > 256 || !NvidiaKey(key)) continue;
    if (StartsWith(key, "updates/dkms/")) return std::string(key);  // depmod ranks updates/ first
    if (packaged.empty()) packaged = std::string(key);
  }
  return packaged;
}

int BranchFromModulePath(std::string_view path) {
  auto at = path.find("/nvidia-");
  if (at == std::string_view::npos) return 0;
  int branch = 0;
  size_t i = at + 8, digits = 0;
  for (; i < path.size() && path[i] >= '0' && path[i] <= '9' && digits < 4; ++i, ++digits)
    branch = branch * 10 + (path[i] - '0');
  return digits == 3 ? branch : 0;
}

std::string LastErrorLine(std::string_view make_log) {
  std::string compiler, make;
  for (const auto& raw : Split(make_log, '\n')) {
    std::string_view line = Trim(raw);
    if (line.find("error:") != std::string_view::npos)
      compiler = std::string(line);
    else if (line.find("***") != std::string_view::npos && line.find("Error") != std::string_view::npos)
      make = std::string(line);
  }
  std::string safe = TerminalSafe(compiler.empty() ? make : compiler);
  if (safe.size() <= 200) return safe;
  size_t cut = 200;  // never half a UTF-8 character
  while (cut > 0 && (static_cast<unsigned char>(safe[cut]) & 0xC0) == 0x80) --cut;
  return safe.substr(0, cut) + "...";
}

void ProbeKernels(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  BootInfo& boot = facts.boot;
  boot.kernels = ListKernels(fs, facts);
  if (boot.kernels.empty()) return;
  boot.probed = true;
  boot.dkms_versions = DkmsVersions(fs);
  for (auto& k : boot.kernels) {
    ReadDkms(fs, boot.dkms_versions, k);
    ReadModule(fs, k);
  }
  NextBoot(fs, boot);
}

}  // namespace gp::probe
