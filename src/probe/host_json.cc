// HostFacts <-> JSON. The stable keys of docs/json.md come first in spirit; every other HostFacts field is
// written too (gpuprep's extras), so a snapshot read back equals what was probed (except `live`, which is
// false for anything read from a file). Reading tolerates unknown keys and missing extras; the stable keys
// are required and type-checked, with errors that point at the offending value.
#include "probe/host_json.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>

#include "probe/boot.h"
#include "probe/steps.h"
#include "util/error.h"
#include "util/json_locator.h"
#include "util/version.h"

namespace gp::probe {
namespace {

using nlohmann::json;

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json ComponentToJson(const Component& c) {
  return json{{"found", c.found},
              {"version", OrNull(c.version)},
              {"source", c.source},
              {"path", c.path},
              {"cuda_major", c.cuda_major ? json(*c.cuda_major) : json(nullptr)},
              {"notes", c.notes}};
}

json DriverToJson(const DriverInfo& d) {
  return json{{"module",
               {{"loaded", d.module.loaded},
                {"version", OrNull(d.module.version)},
                {"open", d.module.open},
                {"nvrm_line", d.module.nvrm_line}}},
              {"userspace_version", OrNull(d.userspace_version)},
              {"userspace_source", d.userspace_source},
              {"nvml_error", d.nvml_error ? json(*d.nvml_error) : json(nullptr)},
              {"nvml_device_count", d.nvml_device_count ? json(*d.nvml_device_count) : json(nullptr)},
              {"nouveau_loaded", d.nouveau_loaded},
              {"nouveau_blacklisted", d.nouveau_blacklisted},
              {"secure_boot", d.secure_boot ? json(*d.secure_boot) : json(nullptr)},
              {"kernel_headers", d.kernel_headers},
              {"dkms_module", d.dkms_module},
              {"dkms_signed", d.dkms_signed},
              {"persistenced_enabled", d.persistenced_enabled},
              {"persistenced_running", d.persistenced_running},
              {"persistenced_detail", d.persistenced_detail}};
}

bool DockerWorthWriting(const DockerInfo& d) {
  return d.cli_found || d.engine_reachable || !d.version.empty() || !d.daemon_json_runtimes.empty() ||
         !d.daemon_json_error.empty() || !d.detail.empty();
}

// Only hosts with something to say about the NVLink fabric carry the "fabric" object.
bool FabricWorthWriting(const FabricInfo& f) {
  return !f.platform.empty() || !f.connectx.empty() || f.nvlsm.installed || f.nvlsm.enabled;
}

json FabricToJson(const FabricInfo& f) {
  json connectx = json::array();
  for (const ConnectxFunction& c : f.connectx)
    connectx.push_back({{"address", c.address}, {"vpd", c.vpd}, {"detail", c.detail}});
  return json{{"platform", OrNull(f.platform)},
              {"decided_by", OrNull(f.decided_by)},
              {"bridges", f.bridges},
              {"connectx", connectx},
              {"nvlsm",
               {{"installed", f.nvlsm.installed},
                {"version", OrNull(f.nvlsm.version)},
                {"enabled", f.nvlsm.enabled},
                {"running", f.nvlsm.running}}},
              {"ib_umad_loaded", f.ib_umad_loaded},
              {"ib_umad_available", f.ib_umad_available},
              {"ib_umad_detail", f.ib_umad_detail}};
}

// Only hosts with RDMA devices or physical network devices carry the "network" object.
json NetworkToJson(const NetworkInfo& n) {
  json rdma = json::array();
  for (const RdmaDevice& d : n.rdma) {
    json ports = json::array();
    for (const RdmaPort& p : d.ports)
      ports.push_back({{"number", p.number},
                       {"state", p.state},
                       {"phys_state", p.phys_state},
                       {"link_layer", p.link_layer},
                       {"rate", p.rate},
                       {"roce_v2_ipv4", p.roce_v2_ipv4},
                       {"netdev", OrNull(p.netdev)},
                       {"netdev_state", OrNull(p.netdev_state)}});
    rdma.push_back({{"name", d.name},
                    {"pci", OrNull(d.pci)},
                    {"driver", OrNull(d.driver)},
                    {"vendor", OrNull(d.vendor)},
                    {"efa", d.efa},
                    {"numa_node", d.numa_node ? json(*d.numa_node) : json(nullptr)},
                    {"ports", ports}});
  }
  auto opt_bool = [](const std::optional<bool>& b) { return b ? json(*b) : json(nullptr); };
  json nics = json::array();
  for (const NetDevice& d : n.nics)
    nics.push_back({{"name", d.name},
                    {"pci", OrNull(d.pci)},
                    {"operstate", OrNull(d.operstate)},
                    {"speed_mbps", d.speed_mbps ? json(*d.speed_mbps) : json(nullptr)},
                    {"ipv4", opt_bool(d.ipv4)},
                    {"ipv6", opt_bool(d.ipv6)}});
  json bridges = json::array();
  for (const PciBridge& b : n.bridges)
    bridges.push_back({{"address", b.address}, {"acs_ctrl", b.acs_ctrl ? json(*b.acs_ctrl) : json(nullptr)}});
  json upstream = json::object();
  for (const auto& [f, chain] : n.upstream) upstream[f] = chain;
  return json{{"rdma", rdma},
              {"peermem", n.peermem},
              {"peermem_path", OrNull(n.peermem_path)},
              {"nics", nics},
              {"bridges", bridges},
              {"upstream", upstream},
              {"acs_skip", OrNull(n.acs_skip)},
              {"vm", OrNull(n.vm)}};
}

// Only hosts whose installed kernels were found carry the "boot" object.
json BootToJson(const BootInfo& b) {
  json kernels = json::array();
  for (const InstalledKernel& k : b.kernels)
    kernels.push_back({{"release", k.release},
                       {"source", k.source},
                       {"headers", k.headers},
                       {"modules_dep", k.modules_dep},
                       {"module_path", OrNull(k.module_path)},
                       {"module_version", OrNull(k.module_version)},
                       {"module_branch", k.module_branch},
                       {"dkms_version", OrNull(k.dkms_version)},
                       {"dkms_log", OrNull(k.dkms_log)},
                       {"dkms_error", OrNull(k.dkms_error)}});
  return json{{"kernels", kernels},
              {"dkms_versions", b.dkms_versions},
              {"next_kernel", OrNull(b.next_kernel)},
              {"next_detail", b.next_detail}};
}

json DockerToJson(const DockerInfo& d) {
  return json{{"version", OrNull(d.version)},
              {"runtimes", d.runtimes},
              {"default_runtime", OrNull(d.default_runtime)},
              {"cdi", d.cdi},
              {"cdi_devices", d.cdi_devices},
              {"cli_found", d.cli_found},
              {"engine_reachable", d.engine_reachable},
              {"daemon_json_error", d.daemon_json_error},
              {"daemon_json_runtimes", d.daemon_json_runtimes},
              {"detail", d.detail}};
}

// ------------------------------------------------------------------------------------------ reading
// Walks a parsed document with the dotted path of each value, so errors can name it and (through the
// locator) point at its line and column.
class Reader {
 public:
  Reader(std::string file, std::function<std::pair<int, int>(const std::string&)> where)
      : file_(std::move(file)), where_(std::move(where)) {}

  [[noreturn]] void Fail(const std::string& path, const std::string& message) const {
    auto [line, col] = where_(path);
    throw FileError(file_, line, col, (path.empty() ? "" : path + ": ") + message);
  }

  static std::string Join(const std::string& base, const std::string& key) {
    return base.empty() ? key : base + "." + key;
  }

  // The member `key` of `obj` (at `path`), or nullptr when absent (or null and !required).
  const json* Member(const json& obj, const std::string& path, const char* key, bool required) const {
    auto it = obj.find(key);
    if (it == obj.end() || (it->is_null() && !required)) {
      if (required) Fail(path, std::string("missing required key \"") + key + "\"");
      return nullptr;
    }
    return &*it;
  }

  const json& Object(const json& v, const std::string& path) const {
    if (!v.is_object()) Fail(path, "expected an object");
    return v;
  }
  const json& Array(const json& v, const std::string& path) const {
    if (!v.is_array()) Fail(path, "expected an array");
    return v;
  }

  // Typed members. Required ones must be present and of the type; optional ones may be absent or null.
  void Str(const json& obj, const std::string& path, const char* key, bool required, std::string& out) const {
    const json* v = Member(obj, path, key, required);
    if (!v) return;
    if (!v->is_string()) Fail(Join(path, key), "expected a string");
    out = v->get<std::string>();
  }
  // A string that may be null (null -> "").
  void NullableStr(const json& obj, const std::string& path, const char* key, bool required,
                   std::string& out) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) Fail(path, std::string("missing required key \"") + key + "\"");
      return;
    }
    if (it->is_null()) return;
    if (!it->is_string()) Fail(Join(path, key), "expected a string or null");
    out = it->get<std::string>();
  }
  template <typename T>
  void Uint(const json& obj, const std::string& path, const char* key, bool required, T& out) const {
    const json* v = Member(obj, path, key, required);
    if (!v) return;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<long long>() >= 0))
      Fail(Join(path, key), "expected a non-negative integer");
    // At most what the field's type holds, and never past 2^63 - 1 (byte counts are summed and doubled).
    const auto most = static_cast<unsigned long long>(
        std::min<uintmax_t>(std::numeric_limits<T>::max(), std::numeric_limits<int64_t>::max()));
    if (v->get<unsigned long long>() > most)
      Fail(Join(path, key), "expected an integer from 0 to " + std::to_string(most));
    out = static_cast<T>(v->get<unsigned long long>());
  }
  template <typename T>
  void OptUint(const json& obj, const std::string& path, const char* key, std::optional<T>& out) const {
    const json* v = Member(obj, path, key, false);
    if (!v) return;
    T value{};
    Uint(obj, path, key, true, value);
    out = value;
  }
  void Bool(const json& obj, const std::string& path, const char* key, bool& out) const {
    const json* v = Member(obj, path, key, false);
    if (!v) return;
    if (!v->is_boolean()) Fail(Join(path, key), "expected a boolean");
    out = v->get<bool>();
  }
  void StrList(const json& obj, const std::string& path, const char* key,
               std::vector<std::string>& out) const {
    const json* v = Member(obj, path, key, false);
    if (!v) return;
    std::string p = Join(path, key);
    Array(*v, p);
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) Fail(p + "[" + std::to_string(i) + "]", "expected a string");
      out.push_back((*v)[i].get<std::string>());
    }
  }
  // An optional sub-object: calls `fn(obj, path)` when present.
  void Sub(const json& obj, const std::string& path, const char* key,
           const std::function<void(const json&, const std::string&)>& fn) const {
    const json* v = Member(obj, path, key, false);
    if (!v) return;
    std::string p = Join(path, key);
    fn(Object(*v, p), p);
  }

 private:
  std::string file_;
  std::function<std::pair<int, int>(const std::string&)> where_;
};

void ReadComponent(const Reader& r, const json& o, const std::string& p, Component& c) {
  r.Bool(o, p, "found", c.found);
  r.NullableStr(o, p, "version", false, c.version);
  r.Str(o, p, "source", false, c.source);
  r.Str(o, p, "path", false, c.path);
  r.OptUint(o, p, "cuda_major", c.cuda_major);
  r.StrList(o, p, "notes", c.notes);
}

void ReadDriver(const Reader& r, const json& o, const std::string& p, DriverInfo& d) {
  r.Sub(o, p, "module", [&](const json& m, const std::string& mp) {
    r.Bool(m, mp, "loaded", d.module.loaded);
    r.NullableStr(m, mp, "version", false, d.module.version);
    r.Bool(m, mp, "open", d.module.open);
    r.Str(m, mp, "nvrm_line", false, d.module.nvrm_line);
  });
  r.NullableStr(o, p, "userspace_version", false, d.userspace_version);
  r.Str(o, p, "userspace_source", false, d.userspace_source);
  if (const json* v = r.Member(o, p, "nvml_error", false)) {
    if (!v->is_string()) r.Fail(Reader::Join(p, "nvml_error"), "expected a string or null");
    d.nvml_error = v->get<std::string>();
  }
  r.OptUint(o, p, "nvml_device_count", d.nvml_device_count);
  r.Bool(o, p, "nouveau_loaded", d.nouveau_loaded);
  r.Bool(o, p, "nouveau_blacklisted", d.nouveau_blacklisted);
  if (r.Member(o, p, "secure_boot", false)) {
    bool sb = false;
    r.Bool(o, p, "secure_boot", sb);
    d.secure_boot = sb;
  }
  r.Bool(o, p, "kernel_headers", d.kernel_headers);
  r.Bool(o, p, "dkms_module", d.dkms_module);
  r.Bool(o, p, "dkms_signed", d.dkms_signed);
  r.Bool(o, p, "persistenced_enabled", d.persistenced_enabled);
  r.Str(o, p, "persistenced_detail", false, d.persistenced_detail);
  if (r.Member(o, p, "persistenced_running", false)) {
    r.Bool(o, p, "persistenced_running", d.persistenced_running);
  } else if (d.persistenced_detail.find(", running (pid ") != std::string::npos) {
    // A snapshot from before the two were told apart: "enabled" then meant enabled or running, and the
    // detail still says which ("nvidia-persistenced.service not enabled, running (pid N)").
    d.persistenced_running = true;
    d.persistenced_enabled = d.persistenced_detail.rfind("nvidia-persistenced.service enabled", 0) == 0;
  }
}

void ReadGpu(const Reader& r, const json& g, const std::string& p, Gpu& gpu) {
  r.Uint(g, p, "index", true, gpu.index);
  r.Str(g, p, "pci", true, gpu.pci);
  r.Str(g, p, "device_id", true, gpu.device_id);
  r.NullableStr(g, p, "subsystem_vendor_id", false, gpu.subsystem_vendor_id);
  r.NullableStr(g, p, "subsystem_device_id", false, gpu.subsystem_device_id);
  r.Str(g, p, "name", true, gpu.name);
  r.NullableStr(g, p, "architecture", false, gpu.architecture);
  r.NullableStr(g, p, "compute_capability", false, gpu.compute_capability);
  r.OptUint(g, p, "memory_bytes", gpu.memory_bytes);
  r.Str(g, p, "driver", false, gpu.driver);
  // Hand-written snapshots omit "known": a GPU with an architecture is one the catalogue knew.
  gpu.known = !gpu.architecture.empty();
  r.Bool(g, p, "known", gpu.known);
  r.NullableStr(g, p, "uuid", false, gpu.uuid);
  r.NullableStr(g, p, "serial", false, gpu.serial);
  r.NullableStr(g, p, "fabric_state", false, gpu.fabric_state);
  if (const json* v = r.Member(g, p, "fabric_status", false)) {
    if (!v->is_number_integer()) r.Fail(Reader::Join(p, "fabric_status"), "expected an integer");
    const long long st = v->get<long long>();
    if (st < -1000000 || st > 1000000) r.Fail(Reader::Join(p, "fabric_status"), "out of range");
    gpu.fabric_status = static_cast<int>(st);
  }
}

void ReadFabric(const Reader& r, const json& o, const std::string& p, FabricInfo& f) {
  r.NullableStr(o, p, "platform", false, f.platform);
  r.NullableStr(o, p, "decided_by", false, f.decided_by);
  r.Uint(o, p, "bridges", false, f.bridges);
  if (const json* list = r.Member(o, p, "connectx", false)) {
    const std::string lp = Reader::Join(p, "connectx");
    r.Array(*list, lp);
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = lp + "[" + std::to_string(i) + "]";
      const json& e = r.Object((*list)[i], ip);
      ConnectxFunction c;
      r.Str(e, ip, "address", true, c.address);
      r.Str(e, ip, "vpd", true, c.vpd);
      r.Str(e, ip, "detail", false, c.detail);
      f.connectx.push_back(std::move(c));
    }
  }
  r.Sub(o, p, "nvlsm", [&](const json& n, const std::string& np) {
    r.Bool(n, np, "installed", f.nvlsm.installed);
    r.NullableStr(n, np, "version", false, f.nvlsm.version);
    r.Bool(n, np, "enabled", f.nvlsm.enabled);
    r.Bool(n, np, "running", f.nvlsm.running);
  });
  r.Bool(o, p, "ib_umad_loaded", f.ib_umad_loaded);
  r.Bool(o, p, "ib_umad_available", f.ib_umad_available);
  r.Str(o, p, "ib_umad_detail", false, f.ib_umad_detail);
}

// An RDMA device or network device name read back from a snapshot is put in a fix's command: checked as the
// probe checks the sysfs names it reads.
void NetName(const Reader& r, const std::string& p, const std::string& key, const std::string& v) {
  bool ok = v.size() <= 64 && v != "." && v != "..";
  for (char c : v)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':'))
      ok = false;
  if (!ok) r.Fail(Reader::Join(p, key), "not a device name");
}

// A PCI address read back from a snapshot names a bridge in a fix's command: DDDD:BB:DD.F.
void PciAddr(const Reader& r, const std::string& p, const std::string& v) {
  if (!IsPciAddress(v)) r.Fail(p, "not a PCI address");
}

void OptBool(const Reader& r, const json& o, const std::string& p, const char* key,
             std::optional<bool>& out) {
  if (!r.Member(o, p, key, false)) return;
  bool b = false;
  r.Bool(o, p, key, b);
  out = b;
}

// The network devices, the bridges above the GPUs and RDMA devices with their ACS, and the VM verdict.
void ReadNetworkPci(const Reader& r, const json& o, const std::string& p, NetworkInfo& n) {
  if (const json* list = r.Member(o, p, "nics", false)) {
    const std::string lp = Reader::Join(p, "nics");
    r.Array(*list, lp);
    if (list->size() > kMaxRdmaDevices) r.Fail(lp, "too many network devices");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = lp + "[" + std::to_string(i) + "]";
      const json& e = r.Object((*list)[i], ip);
      NetDevice d;
      r.Str(e, ip, "name", true, d.name);
      NetName(r, ip, "name", d.name);
      r.NullableStr(e, ip, "pci", false, d.pci);
      if (!d.pci.empty()) PciAddr(r, Reader::Join(ip, "pci"), d.pci);
      r.NullableStr(e, ip, "operstate", false, d.operstate);
      r.OptUint(e, ip, "speed_mbps", d.speed_mbps);
      OptBool(r, e, ip, "ipv4", d.ipv4);
      OptBool(r, e, ip, "ipv6", d.ipv6);
      n.nics.push_back(std::move(d));
    }
  }
  if (const json* list = r.Member(o, p, "bridges", false)) {
    const std::string lp = Reader::Join(p, "bridges");
    r.Array(*list, lp);
    if (list->size() > 256) r.Fail(lp, "too many bridges");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = lp + "[" + std::to_string(i) + "]";
      const json& e = r.Object((*list)[i], ip);
      PciBridge b;
      r.Str(e, ip, "address", true, b.address);
      PciAddr(r, Reader::Join(ip, "address"), b.address);
      r.OptUint(e, ip, "acs_ctrl", b.acs_ctrl);
      n.bridges.push_back(std::move(b));
    }
  }
  if (const json* up = r.Member(o, p, "upstream", false)) {
    const std::string up_path = Reader::Join(p, "upstream");
    r.Object(*up, up_path);
    if (up->size() > 2 * kMaxRdmaDevices) r.Fail(up_path, "too many functions");
    for (auto it = up->begin(); it != up->end(); ++it) {
      const std::string fp = Reader::Join(up_path, it.key());
      PciAddr(r, fp, it.key());
      std::vector<std::string> chain;
      r.StrList(*up, up_path, it.key().c_str(), chain);
      if (chain.size() > 16) r.Fail(fp, "too many bridges");
      for (const auto& b : chain) PciAddr(r, fp, b);
      n.upstream[it.key()] = std::move(chain);
    }
  }
  r.NullableStr(o, p, "acs_skip", false, n.acs_skip);
  r.NullableStr(o, p, "vm", false, n.vm);
}

void ReadNetwork(const Reader& r, const json& o, const std::string& p, NetworkInfo& n) {
  if (const json* list = r.Member(o, p, "rdma", false)) {
    const std::string lp = Reader::Join(p, "rdma");
    r.Array(*list, lp);
    if (list->size() > kMaxRdmaDevices) r.Fail(lp, "too many devices");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = lp + "[" + std::to_string(i) + "]";
      const json& e = r.Object((*list)[i], ip);
      RdmaDevice d;
      r.Str(e, ip, "name", true, d.name);
      NetName(r, ip, "name", d.name);
      r.NullableStr(e, ip, "pci", false, d.pci);
      r.NullableStr(e, ip, "driver", false, d.driver);
      r.NullableStr(e, ip, "vendor", false, d.vendor);
      r.Bool(e, ip, "efa", d.efa);
      r.OptUint(e, ip, "numa_node", d.numa_node);
      if (const json* ports = r.Member(e, ip, "ports", false)) {
        const std::string pp = Reader::Join(ip, "ports");
        r.Array(*ports, pp);
        if (ports->size() > 256) r.Fail(pp, "too many ports");
        for (size_t j = 0; j < ports->size(); ++j) {
          const std::string jp = pp + "[" + std::to_string(j) + "]";
          const json& q = r.Object((*ports)[j], jp);
          RdmaPort port;
          r.Uint(q, jp, "number", true, port.number);
          r.Str(q, jp, "state", false, port.state);
          r.Str(q, jp, "phys_state", false, port.phys_state);
          r.Str(q, jp, "link_layer", false, port.link_layer);
          r.Str(q, jp, "rate", false, port.rate);
          r.Bool(q, jp, "roce_v2_ipv4", port.roce_v2_ipv4);
          r.NullableStr(q, jp, "netdev", false, port.netdev);
          NetName(r, jp, "netdev", port.netdev);
          r.NullableStr(q, jp, "netdev_state", false, port.netdev_state);
          d.ports.push_back(std::move(port));
        }
      }
      n.rdma.push_back(std::move(d));
    }
  }
  r.Bool(o, p, "peermem", n.peermem);
  r.NullableStr(o, p, "peermem_path", false, n.peermem_path);
  ReadNetworkPci(r, o, p, n);
}

// A kernel release or DKMS version read back from a snapshot names a path in a fix: checked as the probe
// checks it.
void ReadKernel(const Reader& r, const json& e, const std::string& ip, InstalledKernel& k) {
  r.Str(e, ip, "release", true, k.release);
  if (!ValidKernelRelease(k.release)) r.Fail(Reader::Join(ip, "release"), "not a kernel release");
  r.Str(e, ip, "source", false, k.source);
  r.Bool(e, ip, "headers", k.headers);
  r.Bool(e, ip, "modules_dep", k.modules_dep);
  r.NullableStr(e, ip, "module_path", false, k.module_path);
  r.NullableStr(e, ip, "module_version", false, k.module_version);
  r.Uint(e, ip, "module_branch", false, k.module_branch);
  r.NullableStr(e, ip, "dkms_version", false, k.dkms_version);
  if (!k.dkms_version.empty() && !Version::Parse(k.dkms_version))
    r.Fail(Reader::Join(ip, "dkms_version"), "not a version");
  r.NullableStr(e, ip, "dkms_log", false, k.dkms_log);
  r.NullableStr(e, ip, "dkms_error", false, k.dkms_error);
}

void ReadBoot(const Reader& r, const json& o, const std::string& p, BootInfo& b) {
  if (const json* list = r.Member(o, p, "kernels", true)) {
    const std::string lp = Reader::Join(p, "kernels");
    r.Array(*list, lp);
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = lp + "[" + std::to_string(i) + "]";
      InstalledKernel k;
      ReadKernel(r, r.Object((*list)[i], ip), ip, k);
      b.kernels.push_back(std::move(k));
    }
  }
  b.probed = !b.kernels.empty();
  r.StrList(o, p, "dkms_versions", b.dkms_versions);
  for (const auto& v : b.dkms_versions)
    if (!Version::Parse(v)) r.Fail(Reader::Join(p, "dkms_versions"), "not a version");
  r.NullableStr(o, p, "next_kernel", false, b.next_kernel);
  if (!b.next_kernel.empty() && !ValidKernelRelease(b.next_kernel))
    r.Fail(Reader::Join(p, "next_kernel"), "not a kernel release");
  r.Str(o, p, "next_detail", false, b.next_detail);
}

void ReadDocker(const Reader& r, const json& o, const std::string& p, DockerInfo& d) {
  r.NullableStr(o, p, "version", false, d.version);
  r.StrList(o, p, "runtimes", d.runtimes);
  r.NullableStr(o, p, "default_runtime", false, d.default_runtime);
  r.Bool(o, p, "cdi", d.cdi);
  r.StrList(o, p, "cdi_devices", d.cdi_devices);
  // A docker object without these keys (hand-written, or docs/json.md's minimal form) describes an engine.
  d.engine_reachable = true;
  r.Bool(o, p, "engine_reachable", d.engine_reachable);
  d.cli_found = d.engine_reachable;
  r.Bool(o, p, "cli_found", d.cli_found);
  r.Str(o, p, "daemon_json_error", false, d.daemon_json_error);
  r.StrList(o, p, "daemon_json_runtimes", d.daemon_json_runtimes);
  r.Str(o, p, "detail", false, d.detail);
}

// The host's OS and its scalar facts (kernel through free disk), in the order they are checked.
void ReadHostBasics(const Reader& r, const json& o, const std::string& path, HostFacts& h) {
  const json* os = r.Member(o, path, "os", true);
  std::string osp = Reader::Join(path, "os");
  r.Object(*os, osp);
  r.Str(*os, osp, "id", true, h.os.id);
  r.Str(*os, osp, "version_id", true, h.os.version_id);
  r.Str(*os, osp, "pretty_name", false, h.os.pretty_name);
  r.Str(*os, osp, "codename", false, h.os.codename);
  r.Str(o, path, "kernel", true, h.kernel);
  r.NullableStr(o, path, "hostname", false, h.hostname);
  r.NullableStr(o, path, "machine_id", false, h.machine_id);
  r.Str(o, path, "arch", true, h.arch);
  r.Uint(o, path, "cpus", true, h.cpus);
  r.Uint(o, path, "memory_bytes", true, h.memory_bytes);
  r.Uint(o, path, "shm_bytes", true, h.shm_bytes);
  r.OptUint(o, path, "disk_free_bytes", h.disk_free_bytes);
}

// The "gpus" array (required); a GPU index listed twice is an error.
void ReadHostGpus(const Reader& r, const json& o, const std::string& path, HostFacts& h) {
  const json* gpus = r.Member(o, path, "gpus", true);
  std::string gp = Reader::Join(path, "gpus");
  r.Array(*gpus, gp);
  for (size_t i = 0; i < gpus->size(); ++i) {
    std::string ip = gp + "[" + std::to_string(i) + "]";
    Gpu gpu;
    ReadGpu(r, r.Object((*gpus)[i], ip), ip, gpu);
    for (const Gpu& before : h.gpus)
      if (before.index == gpu.index)
        r.Fail(Reader::Join(ip, "index"), "GPU " + std::to_string(gpu.index) + " is listed twice");
    h.gpus.push_back(std::move(gpu));
  }
}

// The optional "nvidia_pci" array of NVIDIA PCI devices.
void ReadHostPci(const Reader& r, const json& o, const std::string& path, HostFacts& h) {
  if (const json* pci = r.Member(o, path, "nvidia_pci", false)) {
    std::string pp = Reader::Join(path, "nvidia_pci");
    r.Array(*pci, pp);
    for (size_t i = 0; i < pci->size(); ++i) {
      std::string ip = pp + "[" + std::to_string(i) + "]";
      const json& d = r.Object((*pci)[i], ip);
      PciDevice dev;
      r.Str(d, ip, "address", true, dev.address);
      r.Str(d, ip, "vendor_id", false, dev.vendor_id);
      r.Str(d, ip, "device_id", true, dev.device_id);
      r.NullableStr(d, ip, "subsystem_vendor_id", false, dev.subsystem_vendor_id);
      r.NullableStr(d, ip, "subsystem_device_id", false, dev.subsystem_device_id);
      r.Str(d, ip, "class_id", false, dev.class_id);
      r.Str(d, ip, "driver", false, dev.driver);
      r.OptUint(d, ip, "numa_node", dev.numa_node);
      h.nvidia_pci.push_back(std::move(dev));
    }
  }
}

// The "packages" object: one entry per dpkg package, keyed by name.
void ReadHostPackages(const Reader& r, const json& pk, const std::string& p, HostFacts& h) {
  for (auto it = pk.begin(); it != pk.end(); ++it) {
    std::string ip = Reader::Join(p, it.key());
    const json& e = r.Object(it.value(), ip);
    InstalledPackage pkg;
    pkg.name = it.key();
    r.Str(e, ip, "version", true, pkg.version);
    r.Str(e, ip, "status", false, pkg.status);
    r.Bool(e, ip, "held", pkg.held);
    h.packages[pkg.name] = std::move(pkg);
  }
}

// The "toolkit" object: the NVIDIA Container Toolkit's packages and version.
void ReadHostToolkit(const Reader& r, const json& t, const std::string& p, HostFacts& h) {
  r.Sub(t, p, "packages", [&](const json& pk, const std::string& pp) {
    for (auto it = pk.begin(); it != pk.end(); ++it) {
      if (!it->is_string()) r.Fail(Reader::Join(pp, it.key()), "expected a string");
      h.toolkit.packages[it.key()] = it->get<std::string>();
    }
  });
  r.NullableStr(t, p, "ctk_version", false, h.toolkit.ctk_version);
}

// The "host" object at `path` ("" for a bare host document, "host" inside a doctor document).
HostFacts ReadHost(const Reader& r, const json& doc, const std::string& path) {
  HostFacts h;
  h.live = false;
  const json& o = r.Object(doc, path);
  ReadHostBasics(r, o, path, h);
  ReadHostGpus(r, o, path, h);
  ReadHostPci(r, o, path, h);
  r.Uint(o, path, "nvswitch_count", false, h.nvswitch_count);
  r.Sub(o, path, "driver", [&](const json& d, const std::string& p) { ReadDriver(r, d, p, h.driver); });
  r.Sub(o, path, "cuda", [&](const json& c, const std::string& p) { ReadComponent(r, c, p, h.cuda); });
  r.Sub(o, path, "cudnn", [&](const json& c, const std::string& p) { ReadComponent(r, c, p, h.cudnn); });
  r.Sub(o, path, "nccl", [&](const json& c, const std::string& p) { ReadComponent(r, c, p, h.nccl); });
  r.Sub(o, path, "packages", [&](const json& pk, const std::string& p) { ReadHostPackages(r, pk, p, h); });
  r.StrList(o, path, "dpkg_interrupted", h.dpkg_interrupted);
  r.Sub(o, path, "docker", [&](const json& d, const std::string& p) { ReadDocker(r, d, p, h.docker); });
  r.Sub(o, path, "toolkit", [&](const json& t, const std::string& p) { ReadHostToolkit(r, t, p, h); });
  r.Sub(o, path, "fabricmanager", [&](const json& f, const std::string& p) {
    r.Bool(f, p, "installed", h.fabricmanager.installed);
    r.NullableStr(f, p, "version", false, h.fabricmanager.version);
    r.Bool(f, p, "enabled", h.fabricmanager.enabled);
    r.Bool(f, p, "running", h.fabricmanager.running);
  });
  r.Sub(o, path, "fabric", [&](const json& f, const std::string& p) { ReadFabric(r, f, p, h.fabric); });
  r.Sub(o, path, "boot", [&](const json& b, const std::string& p) { ReadBoot(r, b, p, h.boot); });
  r.Sub(o, path, "network", [&](const json& n, const std::string& p) { ReadNetwork(r, n, p, h.network); });
  r.Bool(o, path, "reboot_required", h.reboot_required);
  r.StrList(o, path, "probe_notes", h.probe_notes);
  return h;
}

// A whole doctor document holds the host under "host"; anything else is a bare host object.
HostFacts ReadNested(const Reader& r, const json& doc) {
  if (doc.is_object() && doc.contains("host")) return ReadHost(r, doc["host"], "host");
  return ReadHost(r, doc, "");
}

// The "gpus" array of HostToJson.
json HostGpusToJson(const std::vector<Gpu>& list) {
  json gpus = json::array();
  for (const Gpu& g : list) {
    json gpu = {{"index", g.index},
                {"pci", g.pci},
                {"device_id", g.device_id},
                {"subsystem_vendor_id", OrNull(g.subsystem_vendor_id)},
                {"subsystem_device_id", OrNull(g.subsystem_device_id)},
                {"name", g.name},
                {"architecture", OrNull(g.architecture)},
                {"compute_capability", OrNull(g.compute_capability)},
                {"memory_bytes", g.memory_bytes ? json(*g.memory_bytes) : json(nullptr)},
                {"driver", g.driver},
                {"known", g.known},
                {"uuid", OrNull(g.uuid)},
                {"serial", OrNull(g.serial)}};
    if (!g.fabric_state.empty()) gpu["fabric_state"] = g.fabric_state;
    if (g.fabric_status) gpu["fabric_status"] = *g.fabric_status;
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

// The "nvidia_pci" array of HostToJson.
json HostPciToJson(const std::vector<PciDevice>& list) {
  json pci = json::array();
  for (const PciDevice& d : list) {
    pci.push_back({{"address", d.address},
                   {"vendor_id", d.vendor_id},
                   {"device_id", d.device_id},
                   {"subsystem_vendor_id", OrNull(d.subsystem_vendor_id)},
                   {"subsystem_device_id", OrNull(d.subsystem_device_id)},
                   {"class_id", d.class_id},
                   {"driver", d.driver},
                   {"numa_node", d.numa_node ? json(*d.numa_node) : json(nullptr)}});
  }
  return pci;
}

}  // namespace

nlohmann::json HostToJson(const HostFacts& h) {
  const json gpus = HostGpusToJson(h.gpus);
  const json pci = HostPciToJson(h.nvidia_pci);
  json packages = json::object();
  for (const auto& [name, p] : h.packages)
    packages[name] = {{"version", p.version}, {"status", p.status}, {"held", p.held}};

  json out = {
      {"hostname", OrNull(h.hostname)},
      {"machine_id", OrNull(h.machine_id)},
      {"os",
       {{"id", h.os.id},
        {"version_id", h.os.version_id},
        {"pretty_name", h.os.pretty_name},
        {"codename", h.os.codename}}},
      {"kernel", h.kernel},
      {"arch", h.arch},
      {"cpus", h.cpus},
      {"memory_bytes", h.memory_bytes},
      {"shm_bytes", h.shm_bytes},
      {"disk_free_bytes", h.disk_free_bytes ? json(*h.disk_free_bytes) : json(nullptr)},
      {"gpus", gpus},
      {"nvidia_pci", pci},
      {"nvswitch_count", h.nvswitch_count},
      {"driver", DriverToJson(h.driver)},
      {"cuda", ComponentToJson(h.cuda)},
      {"cudnn", ComponentToJson(h.cudnn)},
      {"nccl", ComponentToJson(h.nccl)},
      {"packages", packages},
      {"dpkg_interrupted", h.dpkg_interrupted},
      {"toolkit", {{"packages", h.toolkit.packages}, {"ctk_version", OrNull(h.toolkit.ctk_version)}}},
      {"fabricmanager",
       {{"installed", h.fabricmanager.installed},
        {"version", OrNull(h.fabricmanager.version)},
        {"enabled", h.fabricmanager.enabled},
        {"running", h.fabricmanager.running}}},
      {"reboot_required", h.reboot_required},
      {"live", h.live},
      {"probe_notes", h.probe_notes},
  };
  if (DockerWorthWriting(h.docker)) out["docker"] = DockerToJson(h.docker);
  if (FabricWorthWriting(h.fabric)) out["fabric"] = FabricToJson(h.fabric);
  if (h.boot.probed) out["boot"] = BootToJson(h.boot);
  if (!h.network.rdma.empty() || !h.network.nics.empty()) out["network"] = NetworkToJson(h.network);
  return out;
}

HostFacts HostFromJson(const nlohmann::json& doc, const std::string& display_path) {
  Reader r(display_path, [](const std::string&) { return std::pair<int, int>{1, 1}; });
  return ReadNested(r, doc);
}

HostFacts HostFromSnapshotText(const std::string& text, const std::string& display_path) {
  return HostFromSnapshot(ParseSnapshotJson(text, display_path), text, display_path);
}

json ParseSnapshotJson(const std::string& text, const std::string& display_path) {
  if (text.size() > kMaxSnapshotBytes)
    throw FileError(display_path, 1, 1,
                    "snapshot is larger than the " + std::to_string(kMaxSnapshotBytes >> 20) + " MiB limit");
  if (auto deep = JsonTooDeepAt(text, kMaxSnapshotDepth)) {
    auto [line, col] = LineColumnAt(text, *deep);
    throw FileError(display_path, line, col,
                    "nested deeper than " + std::to_string(kMaxSnapshotDepth) + " levels");
  }
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    auto [line, col] = LineColumnAt(text, nul);
    throw FileError(display_path, line, col, "a NUL byte: not JSON text");
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    auto [line, col] = LineColumnAt(text, e.byte == 0 ? 0 : e.byte - 1);
    throw FileError(display_path, line, col, "invalid JSON: " + ParseErrorReason(e.what()));
  } catch (const json::exception& e) {
    // A number too large for a double ("1e999": out_of_range 406) is thrown without a position; the
    // message quotes the token, so point at its first occurrence.
    auto [line, col] = LineColumnAt(text, OverflowNumberAt(text, e.what()));
    throw FileError(display_path, line, col, "invalid JSON: " + ExceptionReason(e.what()));
  }
  return doc;
}

HostFacts HostFromSnapshot(const json& doc, const std::string& text, const std::string& display_path) {
  JsonLocator where(text);
  Reader r(display_path, [&where](const std::string& path) { return where.Find(path); });
  return ReadNested(r, doc);
}

}  // namespace gp::probe
