// Reading records back (watch --replay): every value checked as hostile input, errors as PATH:LINE:COL.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "util/error.h"
#include "util/json_locator.h"
#include "util/kernel_xid.h"
#include "watch/job.h"
#include "watch/jsonl.h"
#include "watch/jsonl_fields.h"
#include "watch/xid.h"

namespace gp::watch {
namespace {

using J = nlohmann::ordered_json;
using namespace fields;

class Reader {
 public:
  Reader(const std::string& path, size_t line) : path_(path), line_(line) {}
  [[noreturn]] void Fail(const std::string& where, const std::string& what) const {
    throw FileError(path_, static_cast<int>(line_), 1, where + ": " + what);
  }
  const J& Get(const J& o, const char* key, const std::string& where) const {
    if (!o.is_object()) Fail(where, "must be an object");
    auto it = o.find(key);
    if (it == o.end()) Fail(where + "." + key, "missing");
    return *it;
  }
  bool Has(const J& o, const char* key) const {
    return o.is_object() && o.contains(key) && !o.at(key).is_null();
  }
  double Number(const J& v, const std::string& where, double max = 1e18) const {
    if (!v.is_number()) Fail(where, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d > max) Fail(where, "out of range");
    return d;
  }
  std::optional<double> OptNumber(const J& o, const char* key, const std::string& where,
                                  double max = 1e18) const {
    if (!Has(o, key)) return std::nullopt;
    return Number(o.at(key), where + "." + key, max);
  }
  uint64_t Unsigned(const J& v, const std::string& where, uint64_t max = UINT64_MAX) const {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
      Fail(where, "must be an unsigned integer");
    const uint64_t u = v.get<uint64_t>();
    if (u > max) Fail(where, "out of range");
    return u;
  }
  template <typename T>
  std::optional<T> OptUnsigned(const J& o, const char* key, const std::string& where, uint64_t max) const {
    if (!Has(o, key)) return std::nullopt;
    return static_cast<T>(Unsigned(o.at(key), where + "." + key, max));
  }
  std::string String(const J& v, const std::string& where, size_t max = 256) const {
    if (!v.is_string()) Fail(where, "must be a string");
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > max) Fail(where, "longer than " + std::to_string(max) + " bytes");
    return s;
  }
  bool Bool(const J& v, const std::string& where) const {
    if (!v.is_boolean()) Fail(where, "must be true or false");
    return v.get<bool>();
  }
  const J& Array(const J& v, const std::string& where, size_t max) const {
    if (!v.is_array()) Fail(where, "must be an array");
    if (v.size() > max) Fail(where, "more than " + std::to_string(max) + " entries");
    return v;
  }
  long long Time(const J& v, const std::string& where) const {
    auto t = ParseRfc3339(String(v, where, 40));
    if (!t) Fail(where, "not an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SS.mmmZ)");
    return *t;
  }
  char State(const J& v, const std::string& where) const {
    std::string s = String(v, where, 1);
    if (s.size() != 1 || s[0] < 'A' || s[0] > 'z') Fail(where, "not a task state letter");
    return s[0];
  }

 private:
  const std::string& path_;
  size_t line_;
};

GpuId ReadId(const Reader& r, const J& o, const std::string& where) {
  GpuId id;
  id.index = static_cast<unsigned>(r.Unsigned(r.Get(o, "index", where), where + ".index", 255));
  id.uuid = r.String(r.Get(o, "uuid", where), where + ".uuid", 96);
  id.pci_bus_id = r.String(r.Get(o, "pci_bus_id", where), where + ".pci_bus_id", 32);
  return id;
}

Gpm ReadGpm(const Reader& r, const J& o, const std::string& where) {
  Gpm g;
  for (const GpmField& f : kGpm) g.*(f.member) = r.OptNumber(o, f.key, where, 1);
  return g;
}

// A process's job (watch/job.h): absent in recordings made before per-job grouping.
Job ReadJob(const Reader& r, const J& o, const std::string& where) {
  auto text = [&](const char* key, size_t max) {
    return r.Has(o, key) ? r.String(o.at(key), where + "." + key, max) : std::string();
  };
  Job j;
  j.kind = r.String(r.Get(o, "kind", where), where + ".kind", 16);
  j.id = text("id", 4 * kMaxJobPathBytes + 3);
  j.cgroup = text("cgroup", 4 * kMaxJobPathBytes + 3);
  j.reason = text("reason", 1024);
  if (std::string e = CheckJob(j); !e.empty()) r.Fail(where, e);
  return j;
}

// The Xid events of a tick (watch/xid.h): absent in recordings made before watch followed the kernel log.
// Their health code is derived from the catalogue again, not read.
std::vector<GpuXid> ReadXids(const Reader& r, const J& a_in, const std::string& where) {
  const J& a = r.Array(a_in, where, kMaxXidsPerGpuTick);
  std::vector<GpuXid> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    auto text = [&](const char* key, size_t max) {
      if (!r.Has(a[i], key)) return std::string();
      std::string v = r.String(a[i].at(key), w + "." + key, max);
      if (CleanLogText(v, max) != v) r.Fail(w + "." + key, "printable ASCII only");
      return v;
    };
    GpuXid x;
    x.xid = static_cast<int>(r.Unsigned(r.Get(a[i], "xid", w), w + ".xid", 99999));
    if (x.xid == 0) r.Fail(w + ".xid", "out of range");
    x.pid = text("pid", 64);
    x.process = text("process", 64);
    x.detail = text("detail", kMaxXidDetail);
    out.push_back(std::move(x));
  }
  return out;
}

// A GPU's state: ok, gap or lost.
GpuState ReadGpuState(const Reader& r, const J& o, const std::string& where) {
  GpuState out = GpuState::kOk;
  const std::string state = r.String(r.Get(o, "state", where), where + ".state", 8);
  if (state == "ok")
    out = GpuState::kOk;
  else if (state == "gap")
    out = GpuState::kGap;
  else if (state == "lost")
    out = GpuState::kLost;
  else
    r.Fail(where + ".state", "must be ok, gap or lost");
  return out;
}

// A GPU's MIG instances, each with its GPM metrics.
std::vector<MigInstance> ReadMigInstances(const Reader& r, const J& a_in, const std::string& where) {
  const J& a = r.Array(a_in, where, 64);
  std::vector<MigInstance> out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    MigInstance m;
    m.gpu_instance_id = static_cast<unsigned>(
        r.Unsigned(r.Get(a[i], "gpu_instance_id", w), w + ".gpu_instance_id", 1u << 16));
    m.gpm = ReadGpm(r, r.Get(a[i], "gpm", w), w + ".gpm");
    out.push_back(m);
  }
  return out;
}

// A GPU's processes as NVML listed them, each with its job where one was recorded.
std::vector<GpuProcess> ReadGpuProcesses(const Reader& r, const J& a_in, const std::string& where) {
  const J& a = r.Array(a_in, where, 4096);
  std::vector<GpuProcess> ps;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    GpuProcess p;
    p.pid = static_cast<unsigned>(r.Unsigned(r.Get(a[i], "pid", w), w + ".pid", 1u << 22));
    p.used_memory_bytes = r.OptUnsigned<uint64_t>(a[i], "used_memory_bytes", w, UINT64_MAX);
    p.gpu_instance_id = r.OptUnsigned<unsigned>(a[i], "gpu_instance_id", w, 1u << 16);
    if (r.Has(a[i], "job")) p.job = ReadJob(r, a[i].at("job"), w + ".job");
    ps.push_back(p);
  }
  return ps;
}

GpuSample ReadGpu(const Reader& r, const J& o, const std::string& where) {
  GpuSample g;
  g.id = ReadId(r, r.Get(o, "gpu", where), where + ".gpu");
  g.name = r.String(r.Get(o, "name", where), where + ".name", 96);
  g.state = ReadGpuState(r, o, where);
  for (const DoubleField& f : kDoubles)
    g.*(f.member) = r.OptNumber(o, f.key, where, f.key == std::string("duty_pct") ? 100 : 1e18);
  g.temperature_c = r.OptNumber(o, "temperature_c", where, 1000);
  if (r.Has(o, "nvlink_peak_source")) {
    const std::string source = r.String(o.at("nvlink_peak_source"), where + ".nvlink_peak_source");
    if (source != kNvlinkPeakActiveLinks && source != kNvlinkPeakLinksPresent)
      r.Fail(where + ".nvlink_peak_source",
             std::string("must be ") + kNvlinkPeakActiveLinks + ", " + kNvlinkPeakLinksPresent + " or null");
    g.nvlink_peak_source = source;
  }
  g.duty_samples = r.OptUnsigned<unsigned>(o, "duty_samples", where, 1u << 20).value_or(0);
  g.duty_zero_samples = r.OptUnsigned<unsigned>(o, "duty_zero_samples", where, g.duty_samples).value_or(0);
  if (r.Has(o, "duty_buffer_empty"))
    g.duty_buffer_empty = r.Bool(o.at("duty_buffer_empty"), where + ".duty_buffer_empty");
  g.memory_used_bytes = r.OptUnsigned<uint64_t>(o, "memory_used_bytes", where, UINT64_MAX);
  g.memory_total_bytes = r.OptUnsigned<uint64_t>(o, "memory_total_bytes", where, UINT64_MAX);
  g.sm_clock_mhz = r.OptUnsigned<unsigned>(o, "sm_clock_mhz", where, 100000);
  g.sm_clock_max_mhz = r.OptUnsigned<unsigned>(o, "sm_clock_max_mhz", where, 100000);
  g.clock_event_reasons = r.OptUnsigned<uint64_t>(o, "clock_event_reasons", where, UINT64_MAX);
  if (r.Has(o, "gpm")) g.gpm = ReadGpm(r, o.at("gpm"), where + ".gpm");
  if (r.Has(o, "mig_mode")) g.mig_mode = r.Bool(o.at("mig_mode"), where + ".mig_mode");
  if (r.Has(o, "mig_instances"))
    g.mig_instances = ReadMigInstances(r, o.at("mig_instances"), where + ".mig_instances");
  if (r.Has(o, "processes")) g.processes = ReadGpuProcesses(r, o.at("processes"), where + ".processes");
  g.process_entry_bytes = r.OptUnsigned<unsigned>(o, "process_entry_bytes", where, 64).value_or(0);
  if (r.Has(o, "xids")) g.xids = ReadXids(r, o.at("xids"), where + ".xids");
  return g;
}

HostSample ReadHost(const Reader& r, const J& o, const std::string& where) {
  HostSample h;
  h.cpu_count =
      static_cast<unsigned>(r.Unsigned(r.Get(o, "cpu_count", where), where + ".cpu_count", 1u << 16));
  const J& busy = r.Array(r.Get(o, "cpu_busy_pct", where), where + ".cpu_busy_pct", 1u << 16);
  for (size_t i = 0; i < busy.size(); ++i)
    h.cpu_busy_pct.push_back(r.Number(busy[i], where + ".cpu_busy_pct[]", 100));
  h.procs_blocked = r.OptUnsigned<unsigned>(o, "procs_blocked", where, 1u << 24);
  if (r.Has(o, "pressure")) {
    Pressure p;
    for (const PressureField& f : kPressure)
      p.*(f.member) = r.OptNumber(o.at("pressure"), f.key, where + ".pressure", 100);
    h.pressure = p;
  }
  const J& un = r.Array(r.Get(o, "unattributed_pids", where), where + ".unattributed_pids", 4096);
  for (const J& v : un)
    h.unattributed_pids.push_back(
        static_cast<unsigned>(r.Unsigned(v, where + ".unattributed_pids[]", 1u << 22)));
  const J& procs = r.Array(r.Get(o, "processes", where), where + ".processes", 8192);
  for (size_t i = 0; i < procs.size(); ++i) {
    const std::string w = where + ".processes[" + std::to_string(i) + "]";
    const J& x = procs[i];
    HostProcess p;
    p.pid = static_cast<unsigned>(r.Unsigned(r.Get(x, "pid", w), w + ".pid", 1u << 22));
    p.ppid = static_cast<unsigned>(r.Unsigned(r.Get(x, "ppid", w), w + ".ppid", 1u << 22));
    p.comm = r.String(r.Get(x, "comm", w), w + ".comm", 64);
    const std::string role = r.String(r.Get(x, "role", w), w + ".role", 8);
    if (role == "gpu")
      p.role = ProcessRole::kGpu;
    else if (role == "loader")
      p.role = ProcessRole::kLoader;
    else if (role == "child")
      p.role = ProcessRole::kChild;
    else
      r.Fail(w + ".role", "must be gpu, loader or child");
    const J& gpus = r.Array(r.Get(x, "gpus", w), w + ".gpus", 256);
    for (const J& v : gpus) p.gpus.push_back(static_cast<unsigned>(r.Unsigned(v, w + ".gpus[]", 255)));
    p.state = r.State(r.Get(x, "state", w), w + ".state");
    p.cpu_pct = r.OptNumber(x, "cpu_pct", w, 1e6);
    p.main_thread_cpu_pct = r.OptNumber(x, "main_thread_cpu_pct", w, 1e6);
    p.cpus_allowed = r.OptUnsigned<unsigned>(x, "cpus_allowed", w, 1u << 16);
    p.cgroup_cpu_limit = r.OptNumber(x, "cgroup_cpu_limit", w, 1u << 16);
    p.cgroup_nr_throttled = r.OptUnsigned<uint64_t>(x, "cgroup_nr_throttled", w, UINT64_MAX);
    p.cgroup_throttled_ms = r.OptNumber(x, "cgroup_throttled_ms", w);
    if (r.Has(x, "threads")) {
      const J& ts = r.Array(x.at("threads"), w + ".threads", 8192);
      for (size_t k = 0; k < ts.size(); ++k) {
        const std::string tw = w + ".threads[" + std::to_string(k) + "]";
        HostThread t;
        t.tid = static_cast<unsigned>(r.Unsigned(r.Get(ts[k], "tid", tw), tw + ".tid", 1u << 22));
        t.comm = r.String(r.Get(ts[k], "comm", tw), tw + ".comm", 64);
        t.state = r.State(r.Get(ts[k], "state", tw), tw + ".state");
        t.cpu_pct = r.OptNumber(ts[k], "cpu_pct", tw, 1e6);
        p.threads.push_back(std::move(t));
      }
    }
    h.processes.push_back(std::move(p));
  }
  return h;
}

}  // namespace

Record ParseRecord(std::string_view line, const std::string& path, size_t line_number) {
  Reader r(path, line_number);
  J doc;
  size_t depth = 0, max_depth = 0;
  try {
    doc = J::parse(line, [&](int d, J::parse_event_t event, J&) {
      if (event == J::parse_event_t::object_start || event == J::parse_event_t::array_start) {
        ++depth;
        max_depth = std::max(max_depth, depth);
        if (depth > 8) throw FileError(path, static_cast<int>(line_number), 1, "nested deeper than 8 levels");
      } else if (event == J::parse_event_t::object_end || event == J::parse_event_t::array_end) {
        --depth;
      }
      (void)d;
      return true;
    });
  } catch (const J::parse_error& e) {
    throw FileError(path, static_cast<int>(line_number),
                    static_cast<int>(std::min<size_t>(e.byte, line.size() + 1)), "not a JSON record");
  } catch (const J::exception& e) {  // a number past a double's range ("1e400"): thrown without a position
    throw FileError(path, static_cast<int>(line_number),
                    static_cast<int>(OverflowNumberAt(line, e.what()) + 1),
                    "not a JSON record: " + ExceptionReason(e.what()));
  }
  const std::string type = r.String(r.Get(doc, "type", "record"), "type", 16);
  const uint64_t schema = r.Unsigned(r.Get(doc, "schema", "record"), "schema", 1000);
  if (schema != kSchema)
    r.Fail("schema", "version " + std::to_string(schema) + " is not " + std::to_string(kSchema));
  Record out;
  if (type == "verdict") {
    out.type = Record::Type::kVerdict;
    return out;
  }
  if (type == "summary") {
    out.type = Record::Type::kSummary;
    out.end_ms = r.Time(r.Get(doc, "end", "summary"), "end");
    return out;
  }
  if (type != "sample") r.Fail("type", "\"" + type + "\" is not sample, verdict or summary");
  Sample& s = out.sample;
  s.time_ms = r.Time(r.Get(doc, "time", "sample"), "time");
  s.interval_ms =
      static_cast<long long>(r.Unsigned(r.Get(doc, "interval_ms", "sample"), "interval_ms", 86400000));
  s.window_ms =
      static_cast<long long>(r.Unsigned(r.Get(doc, "window_ms", "sample"), "window_ms", 30LL * 86400000));
  if (s.interval_ms == 0 || s.window_ms == 0) r.Fail("sample", "interval_ms and window_ms must be above 0");
  const J& gpus = r.Array(r.Get(doc, "gpus", "sample"), "gpus", 256);
  for (size_t i = 0; i < gpus.size(); ++i) {
    s.gpus.push_back(ReadGpu(r, gpus[i], "gpus[" + std::to_string(i) + "]"));
    for (size_t j = 0; j < i; ++j)
      if (s.gpus[j].id.index == s.gpus[i].id.index)
        r.Fail("gpus[" + std::to_string(i) + "].index",
               "GPU " + std::to_string(s.gpus[i].id.index) + " is listed twice");
  }
  s.host = ReadHost(r, r.Get(doc, "host", "sample"), "host");
  return out;
}

}  // namespace gp::watch
