// The NVIDIA driver: loaded kernel module vs userspace libraries (and NVML on the live host), nouveau,
// Secure Boot, kernel headers and DKMS.
#include "probe/parsers.h"
#include "probe/state.h"
#include "probe/steps.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

const char* const kSecureBootVar =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
const char* const kLibDirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                                "/usr/lib"};

std::string FileName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The userspace driver version from libnvidia-ml.so.<version> file names (works with --root).
void FindUserspaceByFile(const sys::Fs& fs, DriverInfo& d) {
  const std::string prefix = "libnvidia-ml.so.";
  for (const char* dir : kLibDirs) {
    // The .so.1 link names the version ldconfig chose; reading it avoids listing a large directory.
    const std::string so1 = std::string(dir) + "/libnvidia-ml.so.1";
    auto link = fs.ReadLink(so1);
    if (link) {
      auto v = LibVersionFromName(FileName(*link), prefix);
      if (v && fs.Exists(std::string(dir) + "/" + FileName(*link))) {
        d.userspace_version = *v;
        d.userspace_source = "file:" + std::string(dir) + "/" + FileName(*link);
        return;
      }
    }
    // No libnvidia-ml.so.1 at all: no driver library here; skip listing a directory of a thousand entries.
    // (A dangling or odd .so.1 link still gets the directory listed.)
    if (!link && !fs.Exists(so1)) continue;
    std::optional<Version> best;
    std::string best_name;
    for (const auto& name : fs.List(dir)) {
      if (!StartsWith(name, prefix)) continue;
      auto v = LibVersionFromName(name, prefix);
      if (!v) continue;
      auto parsed = Version::Parse(*v);
      if (parsed && (!best || *parsed > *best)) {
        best = parsed;
        best_name = name;
      }
    }
    if (best) {
      d.userspace_version = best->str();
      d.userspace_source = "file:" + std::string(dir) + "/" + best_name;
      return;
    }
  }
}

}  // namespace

KernelModule ParseNvrmVersion(std::string_view text) {
  KernelModule m;
  for (const auto& line : Split(text, '\n')) {
    auto at = line.find("NVRM version:");
    if (at == std::string::npos) continue;
    m.nvrm_line = std::string(Trim(line));
    m.open = line.find("Open Kernel Module") != std::string::npos;
    // The version is the first dotted number after "Kernel Module" (the open line puts "for <arch>" between).
    auto km = line.find("Kernel Module");
    std::string_view rest = std::string_view(line).substr(km == std::string::npos ? at + 13 : km + 13);
    for (const auto& word : SplitWords(rest)) {
      auto v = Version::Parse(word);
      if (v && v->size() >= 2) {
        m.version = word;
        m.loaded = true;
        break;
      }
    }
    break;
  }
  return m;
}

std::optional<std::string> LibVersionFromName(std::string_view file_name, std::string_view prefix) {
  if (!StartsWith(file_name, prefix)) return std::nullopt;
  auto rest = file_name.substr(prefix.size());
  auto v = Version::Parse(rest);
  if (!v || v->size() < 2) return std::nullopt;
  return std::string(rest);
}

bool BlacklistsNouveau(std::string_view conf) {
  for (const auto& line : Split(conf, '\n')) {
    auto w = SplitWords(line);
    if (w.size() >= 2 && w[0] == "blacklist" && w[1] == "nouveau") return true;
  }
  return false;
}

std::optional<bool> ParseSecureBootVar(std::string_view bytes) {
  if (bytes.size() < 5) return std::nullopt;
  return bytes[4] == 1;
}

void ProbeDriver(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  DriverInfo& d = facts.driver;

  d.module = ReadLoadedModule(fs);

  FindUserspaceByFile(fs, d);
  if (Live(env) && env.native) {
    // Every GPU function by its bus id, bound to nvidia or not (the driver unbinds a GPU that fell off the
    // bus): NVML's answer for each is the evidence, never a comparison of counts.
    std::vector<std::string> bus_ids;
    bus_ids.reserve(facts.gpus.size());
    for (const auto& g : facts.gpus) bus_ids.push_back(ToLower(g.pci));
    sys::NvmlInfo nvml = env.native->Nvml(bus_ids);
    if (nvml.loaded) {
      if (nvml.driver_version && d.userspace_version.empty()) {
        d.userspace_version = *nvml.driver_version;
        d.userspace_source = "nvml";
      }
      if (nvml.device_count) d.nvml_device_count = static_cast<int>(*nvml.device_count);
      if (!nvml.error.empty()) d.nvml_error = nvml.error;
      AttachGpuIdentity(nvml.devices, facts.gpus);
      if (nvml.device_count) AttachGpuHealth(nvml.buses, facts.gpus);
    }
  }
  if (!d.module.loaded && d.userspace_version.empty())
    facts.probe_notes.push_back("driver: no NVIDIA driver found");

  d.nouveau_loaded = NouveauLoaded(fs);
  d.nouveau_blacklisted = NouveauBlacklisted(fs);

  if (fs.IsDir("/sys/firmware/efi")) {
    if (auto sb = fs.ReadPrefix(kSecureBootVar, 16))
      d.secure_boot = ParseSecureBootVar(*sb);
    else
      facts.probe_notes.push_back("driver: EFI without a readable SecureBoot variable");
  }

  if (!facts.kernel.empty()) d.kernel_headers = ExistsInRoot(fs, "/lib/modules/" + facts.kernel + "/build");
  for (const auto& name : fs.List("/var/lib/dkms/nvidia")) {
    if (Version::Parse(name)) d.dkms_module = true;
  }
  d.dkms_signed = fs.Exists("/var/lib/shim-signed/mok/MOK.der") || fs.Exists("/var/lib/dkms/mok.pub");
}

}  // namespace gp::probe
