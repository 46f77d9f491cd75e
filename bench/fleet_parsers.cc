// The three ways of reading fleet snapshots, side by side on the same texts (bench/README.md, "fleet-report"):
//  - nlohmann's DOM: the reference reader (fleet::ReadSnapshotChecked), a whole document tree per snapshot;
//  - nlohmann's SAX interface: one pass, no tree, the same fields kept and every value checked (here only);
//  - simdjson's On-Demand: fleet::SnapshotReader::ReadFast, what fleet-report runs.
// The snapshots are read into memory first; each reader then reads all of them, `rounds` times (median).
// Usage: fleet_parsers ROUNDS SNAPSHOT...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "fleet/snapshot.h"
#include "fleet/snapshot_rules.h"
#include "probe/host_json.h"

namespace {

using Clock = std::chrono::steady_clock;
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
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    Role role;
    std::string a, b, c, d;  // the kept fields of a GPU (pci, name, uuid, serial), layer or finding
  };
  bool Open(bool object) {
    if (stack_.size() + 1 > gp::probe::kMaxSnapshotDepth) return false;
    Role parent = stack_.empty() ? kOther : stack_.back().role, role = kOther;
    if (stack_.empty()) role = object ? kRoot : kOther;
    else if (parent == kRoot && key_ == "host") role = kHost;
    else if (parent == kRoot && key_ == "layers") role = kLayers;
    else if (parent == kHost && key_ == "os") role = kOs;
    else if (parent == kHost && key_ == "gpus") role = kGpus;
    else if (parent == kGpus) role = kGpu;
    else if (parent == kLayers) role = kLayer;
    else if (parent == kLayer && key_ == "findings") role = kFindings;
    else if (parent == kFindings) role = kFinding;
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
      if (gp::fleet::Reported(f.b) && !finding_seen_) host.findings.push_back({f.a, f.b, f.a + ".uncoded", f.c, f.d});
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

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

template <typename F>
double Median(int rounds, F&& pass) {
  std::vector<double> t;
  for (int i = 0; i < rounds; ++i) {
    const auto a = Clock::now();
    pass();
    t.push_back(Seconds(a, Clock::now()));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fleet_parsers ROUNDS SNAPSHOT...\n");
    return 2;
  }
  const int rounds = std::max(1, std::atoi(argv[1]));
  std::vector<std::string> texts;
  size_t bytes = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    texts.push_back(s.str());
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
  gp::fleet::SnapshotReader reader;
  size_t fast_ok = 0;
  const double fast = Median(rounds, [&] {
    for (const auto& t : texts) fast_ok += reader.ReadFast(t).has_value() ? 1 : 0;
  });
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%zu snapshots, %.1f MB, median of %d\n", texts.size(), mb, rounds);
  std::printf("nlohmann DOM (reference)  %7.3f s  %6.0f MB/s\n", dom, mb / dom);
  std::printf("nlohmann SAX              %7.3f s  %6.0f MB/s  (%zu of %zu read)\n", sax, mb / sax,
              sax_ok / static_cast<size_t>(rounds), texts.size());
  std::printf("simdjson On-Demand        %7.3f s  %6.0f MB/s  (%zu of %zu read)\n", fast, mb / fast,
              fast_ok / static_cast<size_t>(rounds), texts.size());
  return findings == 0 ? 1 : 0;
}
