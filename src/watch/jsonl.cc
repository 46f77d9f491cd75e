#include "watch/jsonl.h"

#include <cmath>
#include <cstdio>

#include "util/health_codes.h"
#include "util/xid_catalogue.h"
#include "watch/cost.h"
#include "watch/jobs.h"
#include "watch/jsonl_fields.h"

namespace gp::watch {
namespace {

using J = nlohmann::ordered_json;

using namespace fields;  // the key tables shared with the reader

template <typename T>
J Opt(const std::optional<T>& v) {
  return v ? J(*v) : J(nullptr);
}

const char* StateName(GpuState s) { return s == GpuState::kOk ? "ok" : s == GpuState::kGap ? "gap" : "lost"; }
const char* RoleName(ProcessRole r) {
  return r == ProcessRole::kGpu ? "gpu" : r == ProcessRole::kLoader ? "loader" : "child";
}
std::string StateChar(char c) { return std::string(1, c); }

J IdJson(const GpuId& id) { return {{"index", id.index}, {"uuid", id.uuid}, {"pci_bus_id", id.pci_bus_id}}; }

J JobJson(const Job& j) {
  return {{"kind", j.kind},
          {"id", j.id.empty() ? J(nullptr) : J(j.id)},
          {"cgroup", j.cgroup.empty() ? J(nullptr) : J(j.cgroup)},
          {"reason", j.reason.empty() ? J(nullptr) : J(j.reason)}};
}

J GpmJson(const Gpm& g) {
  J o = J::object();
  for (const GpmField& f : kGpm) o[f.key] = Opt(g.*(f.member));
  return o;
}

// A GPU's processes in a sample record: null where NVML gave no list, each with its job where one was named.
J SampleGpuProcessesJson(const std::optional<std::vector<GpuProcess>>& processes) {
  if (!processes) return nullptr;
  J ps = J::array();
  for (const GpuProcess& p : *processes) {
    J e = {{"pid", p.pid},
           {"used_memory_bytes", Opt(p.used_memory_bytes)},
           {"gpu_instance_id", Opt(p.gpu_instance_id)}};
    if (p.job) e["job"] = JobJson(*p.job);
    ps.push_back(std::move(e));
  }
  return ps;
}

// The Xid events of a tick, with doctor's code for each.
J SampleXidsJson(const std::vector<GpuXid>& xids) {
  J xs = J::array();
  for (const GpuXid& x : xids)
    xs.push_back({{"xid", x.xid},
                  {"code", XidHealthCode(x.xid)},
                  {"pid", x.pid},
                  {"process", x.process},
                  {"detail", x.detail}});
  return xs;
}

// One GPU of a sample record, its keys in the order the record has always had them.
J SampleGpuJson(const GpuSample& g) {
  J o = J::object();
  o["gpu"] = IdJson(g.id);
  o["name"] = g.name;
  o["state"] = StateName(g.state);
  if (g.state == GpuState::kLost) o["code"] = health_codes::kGpuLost;  // doctor's finding for it
  o["duty_pct"] = Opt(g.duty_pct);
  o["duty_samples"] = g.duty_samples;
  o["duty_zero_samples"] = g.duty_zero_samples;
  o["duty_buffer_empty"] = g.duty_buffer_empty;
  o["memory_used_bytes"] = Opt(g.memory_used_bytes);
  o["memory_total_bytes"] = Opt(g.memory_total_bytes);
  for (const DoubleField& f : kDoubles)
    if (std::string(f.key) != "duty_pct") o[f.key] = Opt(g.*(f.member));
  o["nvlink_peak_source"] = Opt(g.nvlink_peak_source);
  o["sm_clock_mhz"] = Opt(g.sm_clock_mhz);
  o["sm_clock_max_mhz"] = Opt(g.sm_clock_max_mhz);
  o["clock_event_reasons"] = Opt(g.clock_event_reasons);
  // Only when read, so the lines of a run without it stay as they were.
  if (g.temperature_c) o["temperature_c"] = *g.temperature_c;
  o["gpm"] = g.gpm ? GpmJson(*g.gpm) : J(nullptr);
  o["mig_mode"] = Opt(g.mig_mode);
  J mig = J::array();
  for (const MigInstance& m : g.mig_instances)
    mig.push_back({{"gpu_instance_id", m.gpu_instance_id}, {"gpm", GpmJson(m.gpm)}});
  o["mig_instances"] = mig;
  o["processes"] = SampleGpuProcessesJson(g.processes);
  o["process_entry_bytes"] = g.process_entry_bytes;
  // Absent when none, so a record without one keeps its shape.
  if (!g.xids.empty()) o["xids"] = SampleXidsJson(g.xids);
  return o;
}

// One process of a sample's host half, with its threads where they were read.
J SampleHostProcessJson(const HostProcess& p) {
  J o = {{"pid", p.pid},
         {"ppid", p.ppid},
         {"comm", p.comm},
         {"role", RoleName(p.role)},
         {"gpus", p.gpus},
         {"state", StateChar(p.state)},
         {"cpu_pct", Opt(p.cpu_pct)},
         {"main_thread_cpu_pct", Opt(p.main_thread_cpu_pct)},
         {"cpus_allowed", Opt(p.cpus_allowed)},
         {"cgroup_cpu_limit", Opt(p.cgroup_cpu_limit)},
         {"cgroup_nr_throttled", Opt(p.cgroup_nr_throttled)},
         {"cgroup_throttled_ms", Opt(p.cgroup_throttled_ms)}};
  if (!p.threads.empty()) {
    J ts = J::array();
    for (const HostThread& t : p.threads)
      ts.push_back(
          {{"tid", t.tid}, {"comm", t.comm}, {"state", StateChar(t.state)}, {"cpu_pct", Opt(t.cpu_pct)}});
    o["threads"] = ts;
  }
  return o;
}

// The host half of a sample record.
J SampleHostJson(const HostSample& h) {
  J host = J::object();
  host["cpu_count"] = h.cpu_count;
  host["cpu_busy_pct"] = h.cpu_busy_pct;
  host["procs_blocked"] = Opt(h.procs_blocked);
  if (h.pressure) {
    J p = J::object();
    for (const PressureField& f : kPressure) p[f.key] = Opt((*h.pressure).*(f.member));
    host["pressure"] = p;
  } else {
    host["pressure"] = nullptr;
  }
  host["unattributed_pids"] = h.unattributed_pids;
  J procs = J::array();
  for (const HostProcess& p : h.processes) procs.push_back(SampleHostProcessJson(p));
  host["processes"] = procs;
  return host;
}

// ------------------------------------------------------------------ reading, with every value checked

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {  // proleptic Gregorian, days since 1970-01-01
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

std::string Rfc3339(long long ms) {
  long long days = ms / 86400000, rem = ms % 86400000;
  if (rem < 0) {
    rem += 86400000;
    --days;
  }
  // civil_from_days
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long y0 = static_cast<long long>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const long long y = y0 + (m <= 2);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", y, m, d, rem / 3600000,
                (rem / 60000) % 60, (rem / 1000) % 60, rem % 1000);
  return buf;
}

std::optional<long long> ParseRfc3339(std::string_view t) {
  // Exactly the form Rfc3339 writes: 24 characters.
  if (t.size() != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' ||
      t[19] != '.' || t[23] != 'Z')
    return std::nullopt;
  auto num = [&](size_t at, size_t len) -> long long {
    long long v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (t[i] < '0' || t[i] > '9') return -1;
      v = v * 10 + (t[i] - '0');
    }
    return v;
  };
  const long long y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
                  s = num(17, 2), ms = num(20, 3);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 || ms < 0)
    return std::nullopt;
  const int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const long long out = ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms;
  if (Rfc3339(out) != t) return std::nullopt;  // 2026-02-31 and the like
  return out;
}

J SampleJson(const Sample& s) {
  J gpus = J::array();
  for (const GpuSample& g : s.gpus) gpus.push_back(SampleGpuJson(g));
  return {{"type", "sample"},
          {"schema", kSchema},
          {"time", Rfc3339(s.time_ms)},
          {"interval_ms", s.interval_ms},
          {"window_ms", s.window_ms},
          {"gpus", gpus},
          {"host", SampleHostJson(s.host)}};
}

J VerdictJson(const Verdict& v) {
  J o = {{"type", "verdict"},
         {"schema", kSchema},
         {"gpu", IdJson(v.gpu)},
         {"gpu_instance_id", Opt(v.gpu_instance_id)},
         {"window", {{"start", Rfc3339(v.start_ms)}, {"end", Rfc3339(v.end_ms)}}},
         {"verdict", VerdictName(v.kind)},
         {"confidence", ConfidenceName(v.confidence)},
         {"detail", v.detail},
         {"evidence", v.evidence},
         {"reasons", v.reasons}};
  // Doctor's health findings the verdict is; absent when none, so a record without one keeps its shape.
  if (!v.health_codes.empty()) o["health_codes"] = v.health_codes;
  o["straggler_gpu"] = v.straggler_gpu ? IdJson(*v.straggler_gpu) : J(nullptr);
  o["fix"] = v.fix;
  o["jobs"] = v.jobs;
  return o;
}

J SummaryJson(const Summary& s) {
  J gpus = J::array();
  for (const GpuSummary& g : s.gpus) {
    J w = J::object();
    for (const auto& [k, n] : g.windows) w[k] = n;
    J closest = J::object();
    for (const auto& [k, n] : g.unclassified_closest) closest[k] = n;
    gpus.push_back({{"gpu", IdJson(g.gpu)},
                    {"name", g.name},
                    {"windows", w},
                    {"unclassified_closest", closest},
                    {"gaps", g.gaps}});
  }
  J lost = J::array();
  for (const LostGpu& l : s.lost_gpus)
    lost.push_back({{"index", l.gpu.index},
                    {"uuid", l.gpu.uuid},
                    {"pci_bus_id", l.gpu.pci_bus_id},
                    {"time", Rfc3339(l.time_ms)},
                    {"code", health_codes::kGpuLost}});
  return {{"type", "summary"},
          {"schema", kSchema},
          {"start", Rfc3339(s.start_ms)},
          {"end", Rfc3339(s.end_ms)},
          {"interval_ms", s.interval_ms},
          {"window_ms", s.window_ms},
          {"samples", s.samples},
          {"windows", s.windows},
          {"judged", s.judged},
          {"reason", Opt(s.reason)},
          {"gpus", gpus},
          {"lost_gpus", lost},
          {"notes", s.notes},
          {"cost", s.cost ? CostJson(*s.cost) : J(nullptr)},
          {"jobs", JobsJson(s.jobs)}};
}

}  // namespace gp::watch
