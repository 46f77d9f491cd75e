#include "accept/record.h"

#include <cmath>
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
  if (phase == "all_reduce") return "busbw_gb_per_s";
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
  if (p.phase == "all_reduce") {
    p.gpu = -1;
    p.peer = static_cast<int>(f.Whole("gpus", kMaxGpus));  // how many took part
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
    if (kind == "run") {
      if (have_run) f.Fail("a second run record");
      r.run = ReadRun(f);
      have_run = true;
    } else if (kind == "gpu") {
      r.gpus.push_back(ReadGpu(f));
      if (!gpus_seen.insert(r.gpus.back().index).second)
        f.Fail("a second gpu record for GPU " + std::to_string(r.gpus.back().index));
    } else if (kind == "phase") {
      r.phases.push_back(ReadPhase(f, line));
    } else if (kind == "end") {
      ended = true;
    } else {
      f.Fail("unknown record " + QuoteToken(kind));
    }
    f.Done();
  }
  if (!ended)
    throw FileError(path, line > 0 ? line : 1, 1, "the recording ends before its end record (truncated)");
  CheckGpuIndexes(r, path);
  return r;
}

}  // namespace gp::accept
