#include "accept/record.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"
#include "util/input.h"

namespace gp::accept {
namespace {

using Json = nlohmann::json;

// One line's object, with the keys read so far; errors name the line.
class Fields {
 public:
  Fields(const Json& obj, const std::string& path, int line) : obj_(obj), path_(path), line_(line) {}

  [[noreturn]] void Fail(const std::string& message) const { throw FileError(path_, line_, 1, message); }

  bool Has(const char* key) const { return obj_.contains(key); }
  const std::string& Path() const { return path_; }
  void Used(const char* key) { used_.erase(key); }

  std::string Text(const char* key, bool required = true) {
    used_.insert(key);
    if (!obj_.contains(key)) {
      if (required) Fail(std::string("\"") + key + "\" is missing");
      return "";
    }
    const Json& v = obj_.at(key);
    if (!v.is_string()) Fail(std::string("\"") + key + "\" must be a string");
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > 1024) Fail(std::string("\"") + key + "\" is longer than 1024 bytes");
    if (InvalidUtf8At(s) || ControlCharAt(s) || BidiControlAt(s))
      Fail(std::string("\"") + key + "\" holds invalid UTF-8 or a control character: " + QuoteToken(s));
    return s;
  }

  double Number(const char* key) {
    used_.insert(key);
    if (!obj_.contains(key)) Fail(std::string("\"") + key + "\" is missing");
    const Json& v = obj_.at(key);
    if (!v.is_number()) Fail(std::string("\"") + key + "\" must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) Fail(std::string("\"") + key + "\" is not a finite number");
    if (d < 0) Fail(std::string("\"") + key + "\" is negative (" + v.dump() + ")");
    return d;
  }

  // A whole number in [0, max].
  int64_t Whole(const char* key, int64_t max) {
    const double d = Number(key);
    const Json& v = obj_.at(key);
    if (!v.is_number_integer() || d > static_cast<double>(max))
      Fail(std::string("\"") + key + "\" must be a whole number up to " + std::to_string(max));
    return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
  }

  // A whole number in [-max, max] (a digest: a sum of signed words).
  int64_t Signed(const char* key, int64_t max) {
    used_.insert(key);
    if (!obj_.contains(key)) Fail(std::string("\"") + key + "\" is missing");
    const Json& v = obj_.at(key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) ||
        (!v.is_number_unsigned() && (v.get<int64_t>() > max || v.get<int64_t>() < -max)))
      Fail(std::string("\"") + key + "\" must be a whole number from -" + std::to_string(max) + " to " +
           std::to_string(max));
    return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
  }

  std::optional<int64_t> OptWhole(const char* key, int64_t max) {
    if (!obj_.contains(key)) {
      used_.insert(key);
      return std::nullopt;
    }
    return Whole(key, max);
  }

  std::vector<uint64_t> WholeList(const char* key, int64_t max, size_t max_items) {
    used_.insert(key);
    if (!obj_.contains(key)) Fail(std::string("\"") + key + "\" is missing");
    const Json& v = obj_.at(key);
    if (!v.is_array() || v.size() > max_items)
      Fail(std::string("\"") + key + "\" must be a list of at most " + std::to_string(max_items) +
           " numbers");
    std::vector<uint64_t> out;
    for (const auto& item : v) {
      if (!item.is_number_integer() || item.get<double>() < 0 ||
          item.get<double>() > static_cast<double>(max))
        Fail(std::string("\"") + key + "\" must hold whole numbers from 0 to " + std::to_string(max));
      out.push_back(item.get<uint64_t>());
    }
    return out;
  }

  std::optional<bool> OptBool(const char* key) {
    used_.insert(key);
    if (!obj_.contains(key)) return std::nullopt;
    if (!obj_.at(key).is_boolean()) Fail(std::string("\"") + key + "\" must be true or false");
    return obj_.at(key).get<bool>();
  }

  // The value of `key` as it is (the caller checks it), or nullptr when absent.
  const Json* Raw(const char* key) {
    used_.insert(key);
    return obj_.contains(key) ? &obj_.at(key) : nullptr;
  }

  // Every key was read: an unknown one is refused, not ignored.
  void Done() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!used_.count(it.key())) Fail("unknown key " + QuoteToken(it.key()));
  }

 private:
  const Json& obj_;
  const std::string& path_;
  int line_;
  std::set<std::string> used_{"record"};
};

constexpr int64_t kMaxGpus = 1024;
constexpr int64_t kMaxNodes = 1024;
constexpr int64_t kMaxBig = int64_t{1} << 62;

RunInfo ReadRun(Fields& f) {
  RunInfo r;
  r.schema = static_cast<int>(f.Whole("schema", 1000));
  if (r.schema != 1) f.Fail("schema " + std::to_string(r.schema) + " is not known (this gpuprep reads 1)");
  r.started_at = f.Text("started_at");
  r.finished_at = f.Text("finished_at");
  r.host = f.Text("host");
  r.driver_version = f.Text("driver_version");
  r.stack = f.Text("stack", false);
  r.topology = f.Text("topology");
  if (r.topology != "nvswitch" && r.topology != "nvlink-bridge" && r.topology != "pcie")
    f.Fail("\"topology\" must be nvswitch, nvlink-bridge or pcie");
  r.cpus = f.Whole("cpus", 1 << 20);
  r.ram_bytes = static_cast<uint64_t>(f.Whole("ram_bytes", kMaxBig));
  r.nvme_bytes = f.WholeList("nvme_bytes", kMaxBig, 256);
  r.source = f.Text("source", false);
  return r;
}

GpuInfo ReadGpu(Fields& f) {
  GpuInfo g;
  g.index = static_cast<int>(f.Whole("gpu", kMaxGpus - 1));
  g.uuid = f.Text("uuid");
  g.serial = f.Text("serial");
  g.name = f.Text("name");
  g.pci_device_id = f.Text("pci_device_id");
  g.memory_total_mib = static_cast<uint64_t>(f.Whole("memory_total_mib", kMaxBig));
  g.pcie_max_gen = static_cast<int>(f.Whole("pcie_max_gen", 16));
  g.pcie_max_width = static_cast<int>(f.Whole("pcie_max_width", 32));
  g.upstream_max_gen = static_cast<int>(f.OptWhole("upstream_max_gen", 16).value_or(0));
  g.upstream_max_width = static_cast<int>(f.OptWhole("upstream_max_width", 32).value_or(0));
  if (auto n = f.OptWhole("nvlink_links_up", 64)) g.nvlink_links_up = static_cast<int>(*n);
  g.fabric_complete = f.OptBool("fabric_complete");
  if (f.Has("nvlink_p2p_peers"))
    for (uint64_t p : f.WholeList("nvlink_p2p_peers", kMaxGpus - 1, kMaxGpus))
      g.nvlink_p2p_peers.push_back(static_cast<int>(p));
  return g;
}

// The unit key each phase carries its figure in.
const char* UnitOf(const std::string& phase) {
  if (phase == "matmul_bf16") return "tflops";
  if (phase == "hbm_copy") return "tb_per_s";
  if (phase == "h2d" || phase == "d2h" || phase == "p2p") return "gb_per_s";
  if (phase == "all_reduce" || phase == "all_reduce_nodes") return "busbw_gb_per_s";
  return nullptr;
}

Phase ReadPhase(Fields& f, int line) {
  Phase p;
  p.line = line;
  p.phase = f.Text("phase");
  const char* unit = UnitOf(p.phase);
  if (!unit) f.Fail("unknown phase " + QuoteToken(p.phase));
  p.unit = unit;
  p.value = f.Number(unit);
  p.duration_s = f.Number("duration_s");
  if (p.phase == "all_reduce" || p.phase == "all_reduce_nodes") {
    p.gpu = -1;
    if (p.phase == "all_reduce_nodes") p.nodes = static_cast<int>(f.Whole("nodes", kMaxNodes));
    p.peer = static_cast<int>(f.Whole("gpus", kMaxGpus * kMaxNodes));  // how many took part
    p.bytes = static_cast<uint64_t>(f.Whole("message_bytes", kMaxBig));
    return p;
  }
  p.gpu = static_cast<int>(f.Whole("gpu", kMaxGpus - 1));
  if (p.phase == "p2p") p.peer = static_cast<int>(f.Whole("peer", kMaxGpus - 1));
  if (p.phase == "matmul_bf16") {
    p.m = f.Whole("m", 1 << 20);
    p.n = f.Whole("n", 1 << 20);
    p.k = f.Whole("k", 1 << 20);
    if (auto g = f.OptWhole("pcie_gen_current", 16)) p.pcie_gen_current = static_cast<int>(*g);
    if (auto w = f.OptWhole("pcie_width_current", 32)) p.pcie_width_current = static_cast<int>(*w);
  } else {
    p.bytes = static_cast<uint64_t>(f.Whole("bytes", kMaxBig));
  }
  return p;
}

// A digest is a sum of at most 2^31 signed 16-bit words: well inside 2^53, JSON's exact integers.
constexpr int64_t kMaxDigest = int64_t{1} << 53;

Burn ReadBurn(Fields& f, int line) {
  Burn b;
  b.line = line;
  b.gpu = static_cast<int>(f.Whole("gpu", kMaxGpus - 1));
  if (auto sm = f.OptWhole("sm_count", 1 << 16)) b.sm_count = static_cast<int>(*sm);
  b.size = f.Whole("size", 1 << 16);
  b.check_values = f.Whole("check_values", kMaxBig);
  b.check_wrong = f.Whole("check_wrong", kMaxBig);
  if (b.check_wrong > b.check_values) f.Fail("\"check_wrong\" is above \"check_values\"");
  b.iterations = static_cast<uint64_t>(f.Whole("iterations", kMaxBig));
  if (b.iterations == 0) f.Fail("\"iterations\" is 0: a burn makes at least one product");
  b.digest = f.Signed("digest", kMaxDigest);
  b.mismatches = static_cast<uint64_t>(f.Whole("mismatches", kMaxBig));
  if (b.mismatches >= b.iterations)
    f.Fail("\"mismatches\" must be below \"iterations\" (the first is the reference)");
  if (auto i = f.OptWhole("first_mismatch_iteration", kMaxBig))
    b.first_mismatch_iteration = static_cast<uint64_t>(*i);
  if (f.Has("first_mismatch_digest")) b.first_mismatch_digest = f.Signed("first_mismatch_digest", kMaxDigest);
  const bool first = b.first_mismatch_iteration.has_value(), digest = b.first_mismatch_digest.has_value();
  if ((b.mismatches > 0) != first || first != digest)
    f.Fail(
        "\"first_mismatch_iteration\" and \"first_mismatch_digest\" are given exactly when \"mismatches\" is "
        "above 0");
  if (first && (*b.first_mismatch_iteration == 0 || *b.first_mismatch_iteration >= b.iterations))
    f.Fail("\"first_mismatch_iteration\" must be from 1 to \"iterations\" - 1");
  if (digest && *b.first_mismatch_digest == b.digest)
    f.Fail("\"first_mismatch_digest\" equals \"digest\": not a mismatch");
  b.duration_s = f.Number("duration_s");
  return b;
}

// The clock-event reasons a burn_clocks record may name (NVML's nvmlClocksEventReason bits).
const char* const kReasonNames[] = {"gpu_idle",   "applications_clocks", "sw_power_cap", "hw_slowdown",
                                    "sync_boost", "sw_thermal",          "hw_thermal",   "hw_power_brake"};

BurnClocks ReadBurnClocks(Fields& f, int line) {
  BurnClocks c;
  c.line = line;
  c.gpu = static_cast<int>(f.Whole("gpu", kMaxGpus - 1));
  c.samples = static_cast<uint64_t>(f.Whole("samples", kMaxBig));
  if (c.samples == 0) f.Fail("\"samples\" is 0");
  c.sm_clock_median_mhz = f.OptWhole("sm_clock_median_mhz", 100000);
  c.sm_clock_min_mhz = f.OptWhole("sm_clock_min_mhz", 100000);
  if (c.sm_clock_median_mhz.has_value() != c.sm_clock_min_mhz.has_value())
    f.Fail("\"sm_clock_median_mhz\" and \"sm_clock_min_mhz\" come together");
  if (c.sm_clock_min_mhz && *c.sm_clock_min_mhz > *c.sm_clock_median_mhz)
    f.Fail("\"sm_clock_min_mhz\" is above \"sm_clock_median_mhz\"");
  if (f.Has("power_median_w") || f.Has("power_max_w")) {
    c.power_median_w = f.Number("power_median_w");
    c.power_max_w = f.Number("power_max_w");
    if (*c.power_median_w > *c.power_max_w || *c.power_max_w > 100000)
      f.Fail("\"power_median_w\" must be at most \"power_max_w\", at most 100000");
  }
  if (f.Has("temperature_median_c") || f.Has("temperature_max_c")) {
    c.temperature_median_c = f.Number("temperature_median_c");
    c.temperature_max_c = f.Number("temperature_max_c");
    if (*c.temperature_median_c > *c.temperature_max_c || *c.temperature_max_c > 1000)
      f.Fail("\"temperature_median_c\" must be at most \"temperature_max_c\", at most 1000");
  }
  if (const Json* r = f.Raw("reasons")) {
    if (!r->is_object() || r->size() > std::size(kReasonNames))
      f.Fail("\"reasons\" must be an object of reasons");
    for (auto it = r->begin(); it != r->end(); ++it) {
      if (std::find(std::begin(kReasonNames), std::end(kReasonNames), it.key()) == std::end(kReasonNames))
        f.Fail("unknown clock-event reason " + QuoteToken(it.key()));
      if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1))
        f.Fail("reason " + it.key() + ": a share from 0 to 1");
      c.reasons.emplace_back(it.key(), it->get<double>());
    }
    // In NVML's bit order, whatever the object's.
    auto rank = [](const std::string& name) {
      return std::find(std::begin(kReasonNames), std::end(kReasonNames), name) - std::begin(kReasonNames);
    };
    std::sort(c.reasons.begin(), c.reasons.end(),
              [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  }
  if (const Json* x = f.Raw("xids")) {
    if (!x->is_array() || x->size() > 1000) f.Fail("\"xids\" must be a list of at most 1000 Xids");
    for (const auto& e : *x) {
      if (!e.is_object() || e.size() != 2 || !e.contains("code") || !e.contains("at_s") ||
          !e.at("code").is_number_integer() || e.at("code").get<double>() < 0 ||
          e.at("code").get<double>() > 65535 || !e.at("at_s").is_number() ||
          !(e.at("at_s").get<double>() >= 0 && e.at("at_s").get<double>() <= 1e6))
        f.Fail("each Xid is {\"code\": 0 to 65535, \"at_s\": seconds into the burn}");
      c.xids.push_back({e.at("code").get<int64_t>(), e.at("at_s").get<double>()});
    }
  }
  return c;
}

// A `nodes` record (docs/json.md): nnodes, node_rank, master, env, ports.
NodesInfo ReadNodes(Fields& f, int line) {
  NodesInfo n;
  n.line = line;
  n.nnodes = static_cast<int>(f.Whole("nnodes", kMaxNodes));
  n.node_rank = static_cast<int>(f.Whole("node_rank", kMaxNodes - 1));
  if (n.nnodes < 2 || n.node_rank >= n.nnodes) f.Fail("\"nnodes\" must be 2 or more, \"node_rank\" below it");
  n.master = f.Text("master");
  if (const Json* e = f.Raw("env")) {
    if (!e->is_object() || e->size() > 64) f.Fail("\"env\" must be an object of at most 64 variables");
    for (auto it = e->begin(); it != e->end(); ++it) {
      if (!it->is_string() || it.key().size() > 128 || it->get_ref<const std::string&>().size() > 1024 ||
          ControlCharAt(it.key()) || ControlCharAt(it->get_ref<const std::string&>()))
        f.Fail("\"env\": each variable is a name and a string of at most 1024 bytes");
      n.env.emplace_back(it.key(), it->get<std::string>());
    }
  }
  if (const Json* ports = f.Raw("ports")) {
    if (!ports->is_array() || ports->size() > 256) f.Fail("\"ports\" must be a list of at most 256 ports");
    for (const auto& p : *ports) {
      if (!p.is_object()) f.Fail("\"ports\": each port is an object");
      Fields pf(p, f.Path(), line);
      pf.Used("record");
      NodePort np;
      np.device = pf.Text("device");
      np.port = static_cast<int>(pf.Whole("port", 255));
      np.link_layer = pf.Text("link_layer");
      np.rate_gbps = pf.Number("rate_gbps");
      np.state = pf.Text("state");
      pf.Done();
      n.ports.push_back(std::move(np));
    }
  }
  return n;
}

// One line's JSON object, or FileError at the byte the parser stopped at.
Json ParseLine(std::string_view text, const std::string& path, int line) {
  if (auto at = InvalidUtf8At(text)) throw FileError(path, line, static_cast<int>(*at) + 1, "invalid UTF-8");
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const int col = static_cast<int>(e.byte > 0 ? e.byte : 1);
    throw FileError(path, line, col, "not a JSON object (truncated or malformed line)");
  } catch (const Json::exception&) {  // a number out of range (1e999)
    throw FileError(path, line, 1, "a number out of range");
  }
  if (!j.is_object()) throw FileError(path, line, 1, "not a JSON object");
  if (!j.contains("record") || !j.at("record").is_string())
    throw FileError(path, line, 1, "\"record\" is missing or not a string");
  return j;
}

void CheckGpuIndexes(const Recording& r, const std::string& path) {
  std::set<int> known;
  for (const auto& g : r.gpus) known.insert(g.index);
  for (const auto& p : r.phases) {
    if (p.gpu >= 0 && !known.count(p.gpu))
      throw FileError(path, p.line, 1, "GPU " + std::to_string(p.gpu) + " has no gpu record");
    if (p.phase == "p2p" && (!known.count(p.peer) || p.peer == p.gpu))
      throw FileError(path, p.line, 1, "peer GPU " + std::to_string(p.peer) + " has no gpu record");
  }
  for (const auto& c : r.burn_clocks)
    if (!known.count(c.gpu))
      throw FileError(path, c.line, 1, "GPU " + std::to_string(c.gpu) + " has no gpu record");
  for (const auto& b : r.burns)
    if (!known.count(b.gpu))
      throw FileError(path, b.line, 1, "GPU " + std::to_string(b.gpu) + " has no gpu record");
}

// A check across nodes has its nodes record, and only a check across nodes has one.
void CheckNodes(const Recording& r, const std::string& path) {
  for (const auto& p : r.phases) {
    if (p.phase == "all_reduce_nodes" && !r.nodes)
      throw FileError(path, p.line, 1, "an all_reduce_nodes record without a nodes record");
    if (p.phase == "all_reduce_nodes" && p.nodes != r.nodes->nnodes)
      throw FileError(path, p.line, 1, "\"nodes\" differs from the nodes record's nnodes");
    if (p.phase != "all_reduce_nodes" && r.nodes)
      throw FileError(path, p.line, 1, "a check across nodes records only all_reduce_nodes");
  }
  if (!r.nodes && !r.nccl_log.empty())
    throw FileError(path, 1, 1, "nccl_log records belong to a check across nodes (a nodes record)");
}

// One record into `r` (the run record's order is the caller's); true for the end record.
bool ReadRecord(Recording& r, Fields& f, const Json& j, const std::string& kind, int line,
                std::set<int>& gpus_seen) {
  if (kind == "run") {
    r.run = ReadRun(f);
  } else if (kind == "gpu") {
    r.gpus.push_back(ReadGpu(f));
    if (!gpus_seen.insert(r.gpus.back().index).second)
      f.Fail("a second gpu record for GPU " + std::to_string(r.gpus.back().index));
  } else if (kind == "phase" && j.contains("phase") && j.at("phase") == "burn") {
    f.Text("phase");
    r.burns.push_back(ReadBurn(f, line));
    for (size_t i = 0; i + 1 < r.burns.size(); ++i)
      if (r.burns[i].gpu == r.burns.back().gpu)
        f.Fail("a second burn record for GPU " + std::to_string(r.burns.back().gpu));
  } else if (kind == "phase") {
    r.phases.push_back(ReadPhase(f, line));
  } else if (kind == "burn_clocks") {
    r.burn_clocks.push_back(ReadBurnClocks(f, line));
    for (size_t i = 0; i + 1 < r.burn_clocks.size(); ++i)
      if (r.burn_clocks[i].gpu == r.burn_clocks.back().gpu)
        f.Fail("a second burn_clocks record for GPU " + std::to_string(r.burn_clocks.back().gpu));
  } else if (kind == "nodes") {
    if (r.nodes) f.Fail("a second nodes record");
    r.nodes = ReadNodes(f, line);
  } else if (kind == "nccl_log") {
    r.nccl_log.push_back(f.Text("line"));
  } else if (kind != "end") {
    f.Fail("unknown record " + QuoteToken(kind));
  }
  return kind == "end";
}

}  // namespace

Recording ParseRecording(std::string_view text, const std::string& path) {
  if (text.size() > kMaxTotal)
    throw UsageError(path + ": larger than " + std::to_string(kMaxTotal) + " bytes; not a recording");
  Recording r;
  bool have_run = false, ended = false;
  std::set<int> gpus_seen;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (raw.size() > kMaxLine)
      throw FileError(path, line, 1, "line longer than " + std::to_string(kMaxLine) + " bytes");
    if (static_cast<size_t>(line) > kMaxRecords)
      throw FileError(path, line, 1, "more than " + std::to_string(kMaxRecords) + " lines");
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (ended) throw FileError(path, line, 1, "a record after the end record");
    const Json j = ParseLine(raw, path, line);
    Fields f(j, path, line);
    const std::string& kind = j.at("record").get_ref<const std::string&>();
    if (!have_run && kind != "run") f.Fail("the first record must be the run record");
    if (kind == "run" && have_run) f.Fail("a second run record");
    have_run = true;
    ended = ReadRecord(r, f, j, kind, line, gpus_seen);
    f.Done();
  }
  if (!ended)
    throw FileError(path, line > 0 ? line : 1, 1, "the recording ends before its end record (truncated)");
  CheckGpuIndexes(r, path);
  CheckNodes(r, path);
  return r;
}

}  // namespace gp::accept
