#include "apply/status.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "manifest/digest.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::apply {
namespace {

nlohmann::ordered_json RecordJson(const StackRecord& r) {
  return {{"stack", r.stack},
          {"manifest", r.manifest},
          {"content_hash", r.content_hash},
          {"finished", r.finished}};
}

// How a recorded stack is loaded again: an embedded name, an absolute path or an https URL (CheckUrl kFetch).
std::string ManifestProblem(const std::string& m) {
  if (m.empty()) return "";
  if (ValidName(m)) return "";
  if (m.find("://") != std::string::npos) return CheckUrl(m, UrlRule::kFetch);
  if (m[0] != '/') return "is not an embedded stack name, an absolute path or a URL";
  if (m.size() > 4096 || InvalidUtf8At(m) || ControlCharAt(m)) return "is not a usable path";
  return "";
}

// Reads one stack record from `j` (the document or its "converged" object); "" when valid, else why.
std::string ReadRecord(const nlohmann::json& j, StackRecord& r, bool with_finished) {
  auto str = [&](const char* key, std::string& out) -> bool {
    if (!j.contains(key) || j[key].is_null()) return true;
    if (!j[key].is_string()) return false;
    out = j[key].get<std::string>();
    return true;
  };
  if (!str("stack", r.stack) || !str("manifest", r.manifest) || !str("content_hash", r.content_hash) ||
      (with_finished && !str("finished", r.finished)))
    return "a stack field is not a string";
  if (!r.stack.empty() && !ValidName(r.stack)) return "stack \"" + r.stack + "\" is not a stack name";
  if (std::string why = ManifestProblem(r.manifest); !why.empty())
    return "manifest \"" + r.manifest + "\" " + why;
  if (!r.content_hash.empty() && !manifest::IsContentHash(r.content_hash))
    return "content_hash \"" + r.content_hash + "\" is not sha256:<64 hex>";
  if (r.manifest.empty()) r.manifest = r.stack;  // the embedded default, recorded by an older gpuprep
  return "";
}

}  // namespace

std::vector<LayerVerdict> LayerVerdicts(const plan::Plan& plan, const Journal& journal, int exit_code) {
  using K = plan::LayerDecision::Kind;
  std::vector<LayerVerdict> out;
  for (const auto& d : plan.layers) {
    LayerVerdict v{d.name, "", d.detail};
    switch (d.kind) {
      case K::kNone:
        v.verdict = "ok";
        break;
      case K::kRefused:
        v.verdict = "refused";
        break;
      case K::kSkipped:
        v.verdict = "skipped";
        break;
      case K::kNotApplicable:
        v.verdict = "n/a";
        break;
      case K::kInstall:
      case K::kReboot: {
        // The layer's steps as the journal recorded them (the latest record of each step id wins).
        bool any_step = false, any_done = false, failed = false, all_done = true;
        for (const auto& step : plan.steps) {
          if (std::find(step.layers.begin(), step.layers.end(), d.name) == step.layers.end()) continue;
          any_step = true;
          std::string status;
          for (const auto& rec : journal.steps)
            if (rec.id == step.id) status = rec.status;
          if (status == "failed") failed = true;
          if (status == "done")
            any_done = true;
          else
            all_done = false;
        }
        // Installed but not yet verified when apply stopped for the reboot: the reboot decides.
        if (failed)
          v.verdict = "failed";
        else if (exit_code == 3 && (d.kind == K::kReboot || (any_done && !all_done)))
          v.verdict = "reboot-required";
        else if (any_step && all_done)
          v.verdict = "installed";
        else
          v.verdict = "pending";
        break;
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::string StatusToText(const RunStatus& s) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& l : s.layers)
    layers.push_back({{"name", l.name}, {"verdict", l.verdict}, {"detail", l.detail}});
  nlohmann::ordered_json doc;
  doc["gpuprep"] = GPUPREP_VERSION;
  doc["stack"] = s.stack;
  doc["manifest"] = s.manifest;
  doc["state"] = s.state;
  doc["exit_code"] = s.exit_code;
  doc["message"] = s.message;
  doc["started"] = s.started;
  doc["finished"] = s.finished;
  doc["layers"] = layers;
  doc["content_hash"] = s.content_hash;
  doc["converged"] = s.converged ? RecordJson(*s.converged) : nlohmann::ordered_json(nullptr);
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

sys::WriteResult WriteStatus(sys::Fs& fs, const RunStatus& s) {
  return fs.WriteAtomic(kStatusPath, StatusToText(s), 0644, /*keep_backup=*/false);
}

std::optional<StatusRecords> ReadStatusRecords(const sys::Fs& fs) {
  if (!fs.Exists(kStatusPath)) return std::nullopt;
  auto fail = [](const std::string& why) -> std::optional<StatusRecords> {
    throw UsageError(std::string(kStatusPath) + ": " + why +
                     "; name the stack to use with --manifest (gpuprep manifest list)");
  };
  constexpr size_t kLimit = 1 << 20;
  auto text = fs.ReadPrefix(kStatusPath, kLimit + 1);
  if (!text) return fail("cannot be read");
  if (text->size() > kLimit) return fail("larger than 1 MiB");
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return fail("is not a JSON object");
  StatusRecords r;
  if (std::string why = ReadRecord(doc, r.last, false); !why.empty()) return fail(why);
  if (doc.contains("state") && doc["state"].is_string()) r.state = doc["state"].get<std::string>();
  if (doc.contains("converged") && !doc["converged"].is_null()) {
    if (!doc["converged"].is_object()) return fail("converged is not an object");
    StackRecord conv;
    if (std::string why = ReadRecord(doc["converged"], conv, true); !why.empty())
      return fail("converged: " + why);
    if (!conv.stack.empty()) r.converged = conv;
  }
  return r;
}

std::optional<HostStack> HostStackOf(const StatusRecords& r) {
  const StackRecord& last = r.last;
  // An interrupted or failed move has changed the host towards the last run's stack: finish it, do not undo
  // it.
  const bool moving =
      (r.state == "reboot-required" || r.state == "failed") && !last.stack.empty() &&
      (!r.converged || last.stack != r.converged->stack || last.manifest != r.converged->manifest);
  if (r.converged && !moving) return HostStack{*r.converged, true, r.state};
  if (!last.stack.empty()) return HostStack{last, false, r.state};
  return std::nullopt;
}

std::optional<HostStack> ReadHostStack(const sys::Fs& fs) {
  auto r = ReadStatusRecords(fs);
  return r ? HostStackOf(*r) : std::nullopt;
}

sys::WriteResult SaveCallback(sys::Fs& fs, const std::string& url) {
  if (url.empty()) {
    if (!fs.Exists(kCallbackPath)) return {};
    return fs.Remove(kCallbackPath);
  }
  return fs.WriteAtomic(kCallbackPath, url + "\n", 0600, /*keep_backup=*/false);
}

std::string ReadCallback(const sys::Fs& fs) {
  auto text = fs.ReadPrefix(kCallbackPath, 4096);
  if (!text) return "";
  std::string url(Trim(*text));
  return CallbackUrlProblem(url).empty() ? url : "";
}

std::string CallbackUrlProblem(const std::string& url) {
  if (url.size() > 2048) return "longer than 2048 bytes";
  for (unsigned char c : url)
    if (c <= 0x20 || c == 0x7f) return "contains a blank or control character";
  std::string rest;
  bool https = false;
  if (StartsWith(url, "https://")) {
    https = true;
    rest = url.substr(8);
  } else if (StartsWith(url, "http://")) {
    rest = url.substr(7);
  } else {
    return "must be an https:// URL";
  }
  const std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string::npos) return "must not carry user info";
  if (authority.empty()) return "has no host";
  if (!https) {
    std::string host = authority;
    if (StartsWith(host, "["))
      host = host.substr(0, host.find(']') + 1);
    else
      host = host.substr(0, host.find(':'));
    if (host != "127.0.0.1" && host != "[::1]")
      return "plain http is only for a literal loopback address (127.0.0.1 or [::1]); use https://";
  }
  return "";
}

sys::Command CallbackCommand(const std::string& url, const std::string& body) {
  sys::Command c;
  c.argv = {"curl",          "--silent",    "--show-error", "--fail",
            "--max-time",    "30",          "--max-redirs", "0",
            "--proto",       "=https,http", "--header",     "Content-Type: application/json",
            "--data-binary", "@-",          "--url",        url};
  c.stdin_data = body;
  c.timeout = std::chrono::milliseconds(40000);
  return c;
}

}  // namespace gp::apply
