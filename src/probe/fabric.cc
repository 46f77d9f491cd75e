// The NVLink fabric of HGX Blackwell and Grace Blackwell hosts, from files only: the ConnectX-7 functions'
// VPD (NVLink switch bridges, probe/vpd.h), the board the GPUs name when a VPD cannot be read (the sysfs vpd
// file is 0600: root only), and whether the running kernel can load ib_umad (Fabric Manager's subnet
// manager reaches the switches through the InfiniBand umad interface). Runs after the gpu, dpkg and services
// steps. NVML's fabric state per GPU comes with the driver step's NVML call (probe/identity.cc).
#include <cctype>

#include "probe/parsers.h"
#include "probe/steps.h"
#include "probe/vpd.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr const char* kFabricPciDir = "/sys/bus/pci/devices";

// GPU device ids of the boards, as manifests/compat.yaml's catalogue lists them (names from pci.ids,
// pciutils/pciids). HGX baseboards whose NVSwitches are reached through ConnectX-7 bridges: GB100 [B200],
// [HGX B200 168GB], [TS4 / B100], GB110 [B300 SXM6 AC].
constexpr const char* kHgxBlackwellIds[] = {"0x2901", "0x2909", "0x2920", "0x3182"};
// Grace Blackwell superchips (NVL72 compute trays; the NVLink switches sit in separate switch trays): GB100
// [HGX GB200], GB110 [GB300].
constexpr const char* kGraceBlackwellIds[] = {"0x2941", "0x31c2", "0x31c3"};

// Calls `fn` with each line of `text` (no newline); stops when it returns true. True when one did.
template <typename Fn>
bool AnyLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (fn(text.substr(0, nl))) return true;
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return false;
}

template <size_t N>
bool OneOf(const std::string& id, const char* const (&ids)[N]) {
  for (const char* i : ids)
    if (id == i) return true;
  return false;
}

std::string ReadFabricId(const sys::Fs& fs, const std::string& path) {
  auto t = fs.ReadPrefix(path, 64);
  return t ? ToLower(Trim(*t)) : std::string();
}

// A kernel release as a path component: letters, digits, '.', '-', '_', '+' (uname -r); else "".
bool SafeKernel(const std::string& k) {
  if (k.empty() || k.size() > 200 || k == "." || k == "..") return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '+'))
      return false;
  return true;
}

void ProbeIbUmad(const sys::Fs& fs, HostFacts& facts) {
  FabricInfo& f = facts.fabric;
  if (fs.Exists("/sys/module/ib_umad")) {
    f.ib_umad_loaded = true;
    f.ib_umad_detail = "loaded (/sys/module/ib_umad)";
  } else if (auto mods = fs.ReadPrefix("/proc/modules", 1 << 20); mods && ProcModulesHas(*mods, "ib_umad")) {
    f.ib_umad_loaded = true;
    f.ib_umad_detail = "loaded (/proc/modules)";
  }
  if (!SafeKernel(facts.kernel)) {
    if (!f.ib_umad_loaded)
      facts.probe_notes.push_back("fabric: unknown kernel release: ib_umad not looked up");
    return;
  }
  const std::string dir = "/lib/modules/" + facts.kernel;
  if (auto t = fs.Read(dir + "/modules.builtin"); t && ModulesFileLists(*t, "ib_umad")) {
    f.ib_umad_available = true;
    if (f.ib_umad_detail.empty()) f.ib_umad_detail = "built into the kernel (" + dir + "/modules.builtin)";
    return;
  }
  if (auto t = fs.Read(dir + "/modules.dep"); t && ModulesFileLists(*t, "ib_umad")) {
    f.ib_umad_available = true;
    if (f.ib_umad_detail.empty()) f.ib_umad_detail = "module of the running kernel (" + dir + "/modules.dep)";
    return;
  }
  for (const char* ext : {".ko", ".ko.zst", ".ko.xz", ".ko.gz"}) {
    const std::string ko = dir + "/kernel/drivers/infiniband/core/ib_umad" + ext;
    if (fs.Exists(ko)) {
      f.ib_umad_available = true;
      if (f.ib_umad_detail.empty()) f.ib_umad_detail = "module file " + ko + " (not in modules.dep)";
      return;
    }
  }
}

}  // namespace

void ProbeFabric(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  FabricInfo& f = facts.fabric;
  int unread = 0;
  for (const auto& addr : fs.List(kFabricPciDir)) {
    const std::string dir = std::string(kFabricPciDir) + "/" + addr;
    if (ReadFabricId(fs, dir + "/vendor") != "0x15b3" || ReadFabricId(fs, dir + "/device") != "0x1021")
      continue;
    const std::string path = dir + "/vpd";
    if (!fs.Exists(path)) continue;  // no VPD capability: an ordinary function
    ConnectxFunction c;
    c.address = addr;
    auto bytes = fs.ReadPrefix(path, kMaxVpdBytes + 1);
    if (!bytes) {
      c.vpd = "unreadable";
      ++unread;
    } else if (Vpd v = ParseVpd(*bytes); !v.valid) {
      c.vpd = "invalid";
      c.detail = v.error;
      ++unread;
    } else if (IsNvlinkSwitchBridge(v)) {
      c.vpd = "bridge";
      ++f.bridges;
    } else {
      c.vpd = "nic";
    }
    f.connectx.push_back(std::move(c));
  }

  std::string hgx_board, grace_board;
  for (const Gpu& g : facts.gpus) {
    if (hgx_board.empty() && OneOf(g.device_id, kHgxBlackwellIds)) hgx_board = g.name;
    if (grace_board.empty() && OneOf(g.device_id, kGraceBlackwellIds)) grace_board = g.name;
  }
  if (f.bridges > 0) {
    f.platform = "hgx-blackwell";
    f.decided_by = "vpd";
  } else if (!hgx_board.empty() && unread > 0) {
    f.platform = "hgx-blackwell";
    f.decided_by = "board";
    facts.probe_notes.push_back("fabric: the VPD of " + std::to_string(unread) +
                                " ConnectX-7 function(s) could not be read (the vpd file is readable by root "
                                "only): NVLink switch bridges assumed from the board (" +
                                hgx_board + ")");
  } else if (!grace_board.empty() && f.bridges == 0 && facts.nvswitch_count == 0) {
    f.platform = "grace-blackwell";
    f.decided_by = "board";
  }
  if (f.platform == "hgx-blackwell") ProbeIbUmad(fs, facts);
}

bool ModulesFileLists(std::string_view text, std::string_view name) {
  const std::string base = "/" + std::string(name) + ".ko";
  return AnyLine(text, [&base](std::string_view line) {
    const std::string_view path = Trim(line.substr(0, line.find(':')));
    for (std::string_view ext : {"", ".xz", ".zst", ".gz"}) {
      const std::string want = base + std::string(ext);
      if (EndsWith(path, want) || path == std::string_view(want).substr(1)) return true;
    }
    return false;
  });
}

bool ProcModulesHas(std::string_view text, std::string_view name) {
  return AnyLine(text, [name](std::string_view line) {
    return StartsWith(line, name) && line.size() > name.size() && line[name.size()] == ' ';
  });
}

}  // namespace gp::probe
