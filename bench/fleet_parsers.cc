// The ways of reading fleet snapshots, side by side on the same texts (bench/README.md, "fleet-report"):
//  - nlohmann's DOM: the reference reader (fleet::ReadSnapshotChecked), a whole document tree per snapshot;
//  - nlohmann's SAX interface: one pass, no tree, the same fields kept and every value checked (here only);
//  - gpuprep's scanner (util/json_scan.h): fleet::ReadSnapshotFast, what fleet-report runs, and the scanner
//    alone validating each text (gp::ValidateJson), the floor of the first.
// The snapshots are read into memory first; each reader then reads all of them, `rounds` times (the median
// of its CPU time).
// Usage: fleet_parsers ROUNDS SNAPSHOT...
//        fleet_parsers report DIR SNAPSHOT...   the report in each format from the reference reader alone,
//        into
//                                               DIR/report.FORMAT (what fleet-report must print byte for
//                                               byte)
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fleet/model.h"
#include "fleet/render.h"
#include "fleet/snapshot.h"
#include "fleet/snapshot_rules.h"
#include "probe/host_json.h"
#include "util/json_scan.h"

namespace {

using nlohmann::json;

// The SAX reader: a stack of what each open container is, the fields kept as they pass. Every value is
// checked by nlohmann's lexer (numbers, strings, structure); what the fleet model needs is kept.
class Sax : public nlohmann::json_sax<json> {
 public:
  enum Role { kRoot, kHost, kOs, kGpus, kGpu, kLayers, kLayer, kFindings, kFinding, kOther };
  gp::fleet::Host host;

  bool null() override { return Scalar(nullptr); }
  bool boolean(bool) override { return Scalar(nullptr); }
  bool number_integer(number_integer_t) override { return Scalar(nullptr); }
  bool number_unsigned(number_unsigned_t) override { return Scalar(nullptr); }
  bool number_float(number_float_t, const string_t&) override { return Scalar(nullptr); }
  bool string(string_t& s) override { return Scalar(&s); }
  bool binary(binary_t&) override { return false; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) override { return Open(true); }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    Role role;
    std::string a, b, c, d;  // the kept fields of a GPU (pci, name, uuid, serial), layer or finding
  };
  bool Open(bool object) {
    if (stack_.size() + 1 > gp::probe::kMaxSnapshotDepth) return false;
    Role parent = stack_.empty() ? kOther : stack_.back().role, role = kOther;
    if (stack_.empty())
      role = object ? kRoot : kOther;
    else if (parent == kRoot && key_ == "host")
      role = kHost;
    else if (parent == kRoot && key_ == "layers")
      role = kLayers;
    else if (parent == kHost && key_ == "os")
      role = kOs;
    else if (parent == kHost && key_ == "gpus")
      role = kGpus;
    else if (parent == kGpus)
      role = kGpu;
    else if (parent == kLayers)
      role = kLayer;
    else if (parent == kLayer && key_ == "findings")
      role = kFindings;
    else if (parent == kFindings)
      role = kFinding;
    stack_.push_back({role, {}, {}, {}, {}});
    return true;
  }
  bool Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.role == kGpu) host.gpus.push_back({f.a, f.b, f.c, f.d});
    if (f.role == kLayer) {
      if (!gp::fleet::KnownLayer(f.a) || !gp::fleet::ValidStatus(f.b)) return false;
      gp::fleet::AddLayer(host, f.a, f.b);
      if (gp::fleet::Reported(f.b) && !finding_seen_)
        host.findings.push_back({f.a, f.b, f.a + ".uncoded", f.c, f.d});
      finding_seen_ = false;
    }
    if (f.role == kFinding && gp::fleet::Reported(f.a)) {
      finding_seen_ = true;
      const std::string& layer = stack_[stack_.size() - 2].a;
      host.findings.push_back({layer, f.a, f.b.empty() ? layer + ".uncoded" : f.b, f.c, f.d});
    }
    return true;
  }
  bool Scalar(const std::string* s) {
    if (stack_.empty()) return true;
    Frame& f = stack_.back();
    if (s && s->size() > gp::fleet::kMaxFieldBytes) return false;
    const std::string& v = s ? *s : empty_;
    switch (f.role) {
      case kRoot:
        if (key_ == "manifest") host.manifest = v;
        break;
      case kHost:
        if (key_ == "hostname") host.hostname = v;
        if (key_ == "machine_id") host.machine_id = v;
        break;
      case kOs:
        if (key_ == "id") f.a = v;
        if (key_ == "version_id") host.os = gp::fleet::OsLabel(f.a, v);
        break;
      case kGpu:
        if (key_ == "pci") f.a = v;
        if (key_ == "name") f.b = v;
        if (key_ == "uuid") f.c = v;
        if (key_ == "serial") f.d = v;
        break;
      case kLayer:
      case kFinding: {
        const bool layer = f.role == kLayer;
        if (key_ == (layer ? "name" : "status")) f.a = v;
        if (key_ == (layer ? "status" : "code")) f.b = v;
        if (key_ == (layer ? "detail" : "message")) f.c = v;
        if (key_ == "fix") f.d = v;
        break;
      }
      default:
        break;
    }
    return true;
  }
  std::vector<Frame> stack_;
  std::string key_;
  const std::string empty_;
  bool finding_seen_ = false;
};

// This thread's CPU seconds: on a shared machine the wall clock also counts the time other processes ran.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

template <typename F>
double Median(int rounds, F&& pass) {
  std::vector<double> t;
  for (int i = 0; i < rounds; ++i) {
    const double a = CpuSeconds();
    pass();
    t.push_back(CpuSeconds() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// fleet-report's output in each of its formats with every snapshot read by the reference alone (the same
// BuildReport and renderers), written to DIR/report.FORMAT.
int Report(const std::string& dir, int argc, char** argv) {
  std::vector<gp::fleet::Host> hosts;
  for (int i = 3; i < argc; ++i) hosts.push_back(gp::fleet::ReadSnapshotChecked(ReadFile(argv[i]), argv[i]));
  const gp::fleet::Report r = gp::fleet::BuildReport(std::move(hosts));
  const std::pair<const char*, std::string> outs[] = {{"text", gp::fleet::RenderText(r)},
                                                      {"markdown", gp::fleet::RenderMarkdown(r)},
                                                      {"json", gp::fleet::RenderJson(r)},
                                                      {"html", gp::fleet::RenderHtml(r)}};
  for (const auto& [format, text] : outs) std::ofstream(dir + "/report." + format, std::ios::binary) << text;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "report") return Report(argv[2], argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: fleet_parsers ROUNDS SNAPSHOT... | fleet_parsers report DIR SNAPSHOT...\n");
    return 2;
  }
  const int rounds = std::max(1, std::atoi(argv[1]));
  std::vector<std::string> texts;
  size_t bytes = 0;
  for (int i = 2; i < argc; ++i) {
    texts.push_back(ReadFile(argv[i]));
    bytes += texts.back().size();
  }
  size_t findings = 0;
  const double dom = Median(rounds, [&] {
    for (const auto& t : texts) findings += gp::fleet::ReadSnapshotChecked(t, "x").findings.size();
  });
  size_t sax_ok = 0;
  const double sax = Median(rounds, [&] {
    for (const auto& t : texts) {
      Sax handler;
      sax_ok += json::sax_parse(t, &handler) ? 1 : 0;
    }
  });
  size_t fast_ok = 0;
  const double fast = Median(rounds, [&] {
    for (const auto& t : texts) fast_ok += gp::fleet::ReadSnapshotFast(t).has_value() ? 1 : 0;
  });
  size_t valid = 0;
  const double scan = Median(rounds, [&] {
    for (const auto& t : texts)
      valid += gp::ValidateJson(t, gp::probe::kMaxSnapshotDepth) == gp::JsonScanner::Verdict::kOk ? 1 : 0;
  });
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%zu snapshots, %.1f MB, CPU time, median of %d\n", texts.size(), mb, rounds);
  std::printf("nlohmann DOM (reference)  %7.3f s  %6.0f MB/s\n", dom, mb / dom);
  std::printf("nlohmann SAX              %7.3f s  %6.0f MB/s  (%zu of %zu read)\n", sax, mb / sax,
              sax_ok / static_cast<size_t>(rounds), texts.size());
  std::printf("gpuprep scanner (fleet)   %7.3f s  %6.0f MB/s  (%zu of %zu read)\n", fast, mb / fast,
              fast_ok / static_cast<size_t>(rounds), texts.size());
  std::printf("gpuprep scanner, validate %7.3f s  %6.0f MB/s  (%zu of %zu valid)\n", scan, mb / scan,
              valid / static_cast<size_t>(rounds), texts.size());
  return findings == 0 ? 1 : 0;
}
