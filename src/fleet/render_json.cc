// The JSON form, written as it goes (a fleet of 10,000 hosts makes a document of tens of MB; no tree of it is
// built), laid out as nlohmann's dump(2) lays out a document; strings escaped by nlohmann itself.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fleet/render.h"

namespace gp::fleet {
namespace {

// Pretty-printed JSON into `sink`, through a buffer flushed every 64 KiB.
class Writer {
 public:
  explicit Writer(std::ostream& sink) : sink_(sink) { out_.reserve(kFlushAt + 8192); }
  ~Writer() { Flush(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void Flush() {
    sink_ << out_;
    out_.clear();
  }

  void Open(char bracket) {
    out_ += bracket;
    ++depth_;
    first_ = true;
  }
  void Close(char bracket) {
    --depth_;
    if (!first_) Newline();
    out_ += bracket;
    first_ = false;
  }
  // The next member's key (inside an object) or the next element (inside an array, key nullptr).
  void Next(const char* key = nullptr) {
    if (!first_) out_ += ',';
    Newline();
    first_ = false;
    if (key) {
      String(key);
      out_ += ": ";
    }
  }
  // As nlohmann writes it (dump with invalid UTF-8 replaced): printable ASCII without '"' and '\\' as it is,
  // anything else through nlohmann.
  void String(const std::string& s) {
    if (std::all_of(s.begin(), s.end(),
                    [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
      out_ += '"';
      out_ += s;
      out_ += '"';
    } else {
      out_ += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    if (out_.size() > kFlushAt) Flush();
  }
  void NullableString(const std::string& s) {
    if (s.empty())
      out_ += "null";
    else
      String(s);
  }
  void Number(size_t n) { out_ += std::to_string(n); }
  // A member whose value is a string (or null, when `nullable` and empty).
  void Field(const char* key, const std::string& value, bool nullable = false) {
    Next(key);
    if (nullable)
      NullableString(value);
    else
      String(value);
  }
  void Strings(const std::vector<std::string>& list) {
    Open('[');
    for (const auto& s : list) {
      Next();
      String(s);
    }
    Close(']');
  }

  void Newline(int depth) {
    out_ += '\n';
    out_.append(2 * static_cast<size_t>(depth), ' ');
  }
  void Newline() { Newline(depth_); }

 private:
  static constexpr size_t kFlushAt = 64 << 10;
  std::ostream& sink_;
  std::string out_;
  int depth_ = 0;
  bool first_ = true;
};

void WriteHost(Writer& w, const Report& r, const Host& h) {
  w.Open('{');
  w.Field("label", h.label);
  w.Field("file", h.file);
  w.Field("hostname", h.hostname, true);
  w.Field("machine_id", h.machine_id, true);
  w.Field("os", h.os);
  w.Field("manifest", h.manifest);
  w.Field("status", h.worst);
  w.Next("gpus");
  w.Open('[');
  for (const auto& g : h.gpus) {
    w.Next();
    w.Open('{');
    w.Field("pci", g.pci);
    w.Field("name", g.name);
    w.Field("uuid", g.uuid, true);
    w.Field("serial", g.serial, true);
    w.Close('}');
  }
  w.Close(']');
  w.Next("layers");
  w.Open('{');
  for (const auto& l : r.layers) {
    w.Next(l.c_str());
    auto it = h.layers.find(l);
    if (it == h.layers.end())
      w.NullableString("");
    else
      w.String(it->second);
  }
  w.Close('}');
  w.Next("findings");
  w.Open('[');
  for (const auto& f : h.findings) {
    w.Next();
    w.String(f.code);
  }
  w.Close(']');
  w.Close('}');
}

}  // namespace

void RenderJson(const Report& r, std::ostream& out) {
  Writer w(out);
  w.Open('{');
  w.Field("gpuprep", GPUPREP_VERSION);
  w.Next("summary");
  w.Open('{');
  w.Next("hosts");
  w.Number(r.hosts.size());
  w.Next("failing");
  w.Number(static_cast<size_t>(r.failing));
  w.Next("warning");
  w.Number(static_cast<size_t>(r.warning));
  w.Next("ok");
  w.Number(static_cast<size_t>(r.ok));
  w.Close('}');
  w.Next("layers");
  w.Strings(r.layers);
  w.Next("hosts");
  w.Open('[');
  for (const auto& h : r.hosts) {
    w.Next();
    WriteHost(w, r, h);
  }
  w.Close(']');
  w.Next("findings");
  w.Open('[');
  for (const auto& g : r.groups) {
    w.Next();
    w.Open('{');
    w.Field("code", g.code);
    w.Field("layer", g.layer);
    w.Field("status", g.status);
    w.Next("hosts");
    w.Strings(g.hosts);
    w.Next("messages");
    w.Strings(g.messages);
    w.Next("fixes");
    w.Strings(g.fixes);
    w.Close('}');
  }
  w.Close(']');
  w.Close('}');
  w.Newline(0);
}

std::string RenderJson(const Report& r) {
  std::ostringstream out;
  RenderJson(r, out);
  return out.str();
}

}  // namespace gp::fleet
