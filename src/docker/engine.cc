#include "docker/engine.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "docker/engine_internal.h"
#include "docker/image_ref.h"
#include "util/strings.h"

namespace gp::docker {
namespace {

using detail::ErrorOf;
using detail::kQuick;
using detail::Text;
using nlohmann::json;
constexpr size_t kMaxLine = 64u << 10;

void Set(EngineError* out, const EngineError& e) {
  if (out) *out = e;
}

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(n) / (1ull << 30));
  else if (n >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%llu kB", static_cast<unsigned long long>(n / 1000));
  return buf;
}

// Aggregates the pull stream: one JSON object per line (Docker's jsonmessage).
class PullStream {
 public:
  explicit PullStream(const std::function<void(const PullProgress&)>& cb) : cb_(cb) {}
  void Feed(std::string_view data) {
    if (buf_.size() + data.size() > kMaxLine) {  // one progress message is a few hundred bytes
      if (error.empty()) error = "a progress message longer than " + std::to_string(kMaxLine >> 10) + " KiB";
      buf_.clear();
      return;
    }
    buf_.append(data);
    size_t nl;
    while ((nl = buf_.find('\n')) != std::string::npos) {
      Line(buf_.substr(0, nl));
      buf_.erase(0, nl + 1);
    }
  }
  void Finish() {
    if (!Trim(buf_).empty()) Line(buf_);
    buf_.clear();
  }
  PullProgress p;
  std::string error;

 private:
  struct Layer {
    uint64_t current = 0, total = 0;
    bool done = false;
  };
  void Line(const std::string& line) {
    if (Trim(line).empty()) return;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return;
    if (auto e = j.find("error"); e != j.end() && e->is_string()) {
      error = e->get<std::string>();
      if (auto d = j.find("errorDetail");
          d != j.end() && d->is_object() && d->contains("message") && (*d)["message"].is_string())
        error = (*d)["message"].get<std::string>();
      return;
    }
    std::string status = Text(j, "status");
    std::string id = Text(j, "id");
    p.status = status;
    if (StartsWith(status, "Digest: ")) p.digest = status.substr(8);
    if (!id.empty() && status != "Pulling from " && !StartsWith(status, "Pulling from")) {
      Layer& l = layers_[id];
      if (status == "Downloading") {
        auto d = j.find("progressDetail");
        if (d != j.end() && d->is_object()) {
          if (d->contains("current") && (*d)["current"].is_number_unsigned())
            l.current = (*d)["current"].get<uint64_t>();
          if (d->contains("total") && (*d)["total"].is_number_unsigned())
            l.total = (*d)["total"].get<uint64_t>();
        }
      } else if (status == "Download complete" || status == "Pull complete" || status == "Already exists") {
        l.done = true;
        if (l.total) l.current = l.total;
      }
    }
    p.layers = layers_.size();
    p.layers_done = 0;
    p.bytes = p.bytes_total = 0;
    for (const auto& [k, l] : layers_) {
      p.layers_done += l.done;
      p.bytes += l.current;
      p.bytes_total += l.total;
    }
    if (cb_) cb_(p);
  }
  const std::function<void(const PullProgress&)>& cb_;
  std::string buf_;
  std::map<std::string, Layer> layers_;
};

}  // namespace

bool ImageDetails::CarriesPyTorch() const {
  for (const auto& e : env)
    if (StartsWith(e, "PYTORCH_VERSION=") || StartsWith(e, "NVIDIA_PYTORCH_VERSION=")) return true;
  return false;
}

std::string PullProgress::Text(const std::string& ref) const {
  std::string s =
      "pulling " + ref + ": " + std::to_string(layers_done) + "/" + std::to_string(layers) + " layers";
  if (bytes_total) s += ", " + Bytes(bytes) + " of " + Bytes(bytes_total);
  return s;
}

std::string ImageDetails::DigestFor(const std::string& name) const {
  auto want = ParseImageRef(name);
  for (const auto& rd : repo_digests) {
    auto at = rd.find('@');
    if (at == std::string::npos) continue;
    auto have = ParseImageRef(rd);
    if (!want || (have && have->Name() == want->Name())) return rd.substr(at + 1);
  }
  return "";
}

std::string EngineMessage(const sys::HttpResponse& r) {
  auto j = json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("message") && j["message"].is_string())
    return j["message"].get<std::string>();
  std::string body(Trim(r.body));
  return body.empty() ? "HTTP " + std::to_string(r.status) : body;
}

void Demultiplex(const std::string& body, std::string& out, std::string& err) {
  const bool framed = body.size() >= 8 && (body[0] == 0 || body[0] == 1 || body[0] == 2) && body[1] == 0 &&
                      body[2] == 0 && body[3] == 0;
  if (!framed) {  // a TTY container's log: all stdout
    out += body;
    return;
  }
  // Read as the attached stream is: it stops at the first bytes that are not a frame header.
  Demultiplexer d;
  d.Feed(body, [&](int fd, std::string_view chunk) {
    (fd == 2 ? err : out).append(chunk);
    return true;
  });
}

std::string QueryEscape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out += static_cast<char>(c);
    else
      out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

sys::HttpResponse Engine::Call(const std::string& method, const std::string& path, const std::string& body,
                               std::chrono::milliseconds timeout,
                               std::function<void(std::string_view)> on_data) {
  sys::UnixRequest req;
  req.method = method;
  req.path = path;
  req.body = body;
  req.timeout = timeout;
  req.on_data = std::move(on_data);
  return Send(std::move(req));
}

sys::HttpResponse Engine::Send(sys::UnixRequest req) {
  req.path = Api() + req.path;
  return http_.Request(socket_, req);
}

Engine::Engine(sys::UnixHttp& http, std::string socket, const std::string& api_version)
    : http_(http), socket_(std::move(socket)) {
  if (!api_version.empty() && api_version.size() <= 16 &&
      api_version.find_first_not_of("0123456789.") == std::string::npos)
    api_ = "/v" + api_version;
}

std::string Engine::Api() {
  if (api_.empty()) {
    auto v = Version();
    api_ = v && !v->api_version.empty() ? "/v" + v->api_version : "/";
    if (api_ == "/") api_.clear();
  }
  return api_;
}

std::optional<EngineVersion> Engine::Version(EngineError* err) {
  auto r = http_.Get(socket_, "/version", kQuick);
  if (!r.ok()) {
    Set(err, ErrorOf(r));
    return std::nullopt;
  }
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    Set(err, {r.status, "/version: not JSON"});
    return std::nullopt;
  }
  EngineVersion v;
  v.version = Text(j, "Version");
  v.api_version = Text(j, "ApiVersion");
  if (v.api_version.find_first_not_of("0123456789.") != std::string::npos) v.api_version.clear();
  return v;
}

std::optional<ImageDetails> Engine::InspectImage(const std::string& ref, EngineError* err) {
  auto r = Call("GET", "/images/" + ref + "/json", "", kQuick);
  if (!r.ok()) {
    Set(err, ErrorOf(r));
    return std::nullopt;
  }
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    Set(err, {r.status, "image inspect: not JSON"});
    return std::nullopt;
  }
  ImageDetails d;
  d.id = Text(j, "Id");
  if (auto rd = j.find("RepoDigests"); rd != j.end() && rd->is_array())
    for (const auto& s : *rd)
      if (s.is_string()) d.repo_digests.push_back(s.get<std::string>());
  if (auto c = j.find("Config"); c != j.end() && c->is_object())
    if (auto e = c->find("Env"); e != c->end() && e->is_array())
      for (const auto& s : *e)
        if (s.is_string()) d.env.push_back(s.get<std::string>());
  return d;
}

std::optional<std::string> Engine::RemoteDigest(const std::string& ref, EngineError* err) {
  auto r = Call("GET", "/distribution/" + ref + "/json", "", std::chrono::seconds(60));
  if (!r.ok()) {
    Set(err, ErrorOf(r));
    return std::nullopt;
  }
  auto j = json::parse(r.body, nullptr, false);
  const std::string digest = j.is_object() && j.contains("Descriptor") ? Text(j["Descriptor"], "digest") : "";
  if (digest.empty()) {
    Set(err, {r.status, "distribution inspect: no Descriptor.digest"});
    return std::nullopt;
  }
  return digest;
}

bool Engine::Pull(const std::string& ref, const std::function<void(const PullProgress&)>& progress,
                  EngineError* err, PullProgress* last) {
  auto parsed = ParseImageRef(ref);
  if (!parsed) {
    Set(err, {0, "\"" + ref + "\" is not an image reference"});
    return false;
  }
  const std::string tag = !parsed->digest.empty() ? parsed->digest
                          : parsed->tag.empty()   ? "latest"
                                                  : parsed->tag;
  PullStream stream(progress);
  auto r =
      Call("POST", "/images/create?fromImage=" + QueryEscape(parsed->Name()) + "&tag=" + QueryEscape(tag), "",
           std::chrono::seconds(300), [&stream](std::string_view d) { stream.Feed(d); });
  stream.Finish();
  if (last) *last = stream.p;
  if (!r.ok()) {
    Set(err, ErrorOf(r));
    return false;
  }
  if (!stream.error.empty()) {
    Set(err, {r.status, stream.error});
    return false;
  }
  return true;
}

namespace {
// What a job across nodes adds to HostConfig (ContainerRun's network_host, devices, memlock, cap_add).
void AddNodesHostConfig(const ContainerRun& run, json& host) {
  if (run.network_host) host["NetworkMode"] = "host";
  if (!run.devices.empty()) {
    json devices = json::array();
    for (const auto& d : run.devices)
      devices.push_back({{"PathOnHost", d}, {"PathInContainer", d}, {"CgroupPermissions", "rwm"}});
    host["Devices"] = devices;
  }
  if (run.memlock_unlimited)
    host["Ulimits"] = json::array({{{"Name", "memlock"}, {"Soft", -1}, {"Hard", -1}}});
  if (!run.cap_add.empty()) host["CapAdd"] = run.cap_add;
}
}  // namespace

std::string Engine::CreateBody(const ContainerRun& run, bool attach) const {
  json host = {{"AutoRemove", run.auto_remove}};
  if (run.ipc_host) host["IpcMode"] = "host";
  if (!run.runtime.empty()) host["Runtime"] = run.runtime;
  if (!run.cdi_devices.empty())
    host["DeviceRequests"] = json::array({{{"Driver", "cdi"}, {"DeviceIDs", run.cdi_devices}}});
  else if (run.gpus_all)
    host["DeviceRequests"] = json::array({{{"Driver", ""},
                                           {"Count", -1},
                                           {"DeviceIDs", nullptr},
                                           {"Capabilities", json::array({json::array({"gpu"})})},
                                           {"Options", json::object()}}});
  AddNodesHostConfig(run, host);
  json env = json::array();
  for (const auto& [k, v] : run.env) env.push_back(k + "=" + v);
  json body = {{"Image", run.image},     {"Cmd", run.cmd},         {"Tty", false},
               {"AttachStdout", attach}, {"AttachStderr", attach}, {"Labels", run.labels},
               {"HostConfig", host}};
  if (!env.empty()) body["Env"] = env;
  return body.dump();
}

ContainerResult Engine::Run(const ContainerRun& run) {
  ContainerResult res;
  auto fail = [&](const char* stage, const sys::HttpResponse& r) {
    res.stage = stage;
    res.error = ErrorOf(r);
    return res;
  };
  auto created = Call("POST", "/containers/create", CreateBody(run, false), std::chrono::seconds(60));
  if (!created.ok()) return fail("create", created);
  auto cj = json::parse(created.body, nullptr, false);
  std::string id = Text(cj, "Id");
  if (id.empty() || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    res.stage = "create";
    res.error = {created.status, "container create: no container Id in the answer"};
    return res;
  }
  auto remove = [&] { Call("DELETE", "/containers/" + id + "?force=1", "", kQuick); };
  auto started = Call("POST", "/containers/" + id + "/start", "", std::chrono::seconds(120));
  if (!started.ok()) {
    fail("start", started);
    remove();
    return res;
  }
  auto waited = Call("POST", "/containers/" + id + "/wait", "",
                     std::chrono::duration_cast<std::chrono::milliseconds>(run.timeout));
  if (!waited.ok()) {
    fail("wait", waited);
    remove();
    return res;
  }
  auto wj = json::parse(waited.body, nullptr, false);
  res.exit_code = wj.is_object() && wj.contains("StatusCode") && wj["StatusCode"].is_number_integer()
                      ? wj["StatusCode"].get<int>()
                      : -1;
  auto logs = Call("GET", "/containers/" + id + "/logs?stdout=1&stderr=1", "", std::chrono::seconds(30));
  if (!logs.ok()) {
    fail("logs", logs);
    remove();
    return res;
  }
  Demultiplex(logs.body, res.out, res.err);
  res.ran = true;
  remove();
  return res;
}

}  // namespace gp::docker
