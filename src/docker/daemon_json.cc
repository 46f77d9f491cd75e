#include "docker/daemon_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "util/error.h"
#include "util/json_locator.h"
#include "util/strings.h"

namespace gp::docker {
namespace {

using nlohmann::ordered_json;

[[noreturn]] void FailAt(const std::string& text, const std::string& display_path, const std::string& json_path,
                         const std::string& message) {
  auto [line, col] = JsonLocator(text).Find(json_path);
  throw FileError(display_path, line, col, message);
}

std::string Brief(const ordered_json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// The object at `key` of `parent`, created when absent or null; throws when it is something else.
ordered_json& ObjectAt(ordered_json& parent, const std::string& key, const std::string& json_path,
                       const std::string& text, const std::string& display_path, std::vector<std::string>& changes,
                       bool& created) {
  created = false;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) {
    if (it != parent.end()) changes.push_back(json_path + ": null -> {}");
    parent[key] = ordered_json::object();
    created = true;
    return parent[key];
  }
  if (!it->is_object())
    FailAt(text, display_path, json_path,
           "\"" + json_path + "\" is " + std::string(it->type_name()) + ", Docker expects an object; correct it by hand");
  return *it;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::string LineDiff(const std::string& before, const std::string& after) {
  const auto a = Lines(before), b = Lines(after);
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out += "  " + a[i++] + "\n";
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out += "- " + a[i++] + "\n";  // removals first, as diff prints them
    } else {
      out += "+ " + b[j++] + "\n";
    }
  }
  return out;
}

DaemonJsonEdit EditDaemonJson(const std::optional<std::string>& current, const DaemonJsonWant& want,
                              const std::string& display_path) {
  const std::string text = current.value_or("");
  ordered_json doc = ordered_json::object();
  if (!Trim(text).empty()) {
    try {
      doc = ordered_json::parse(text);
    } catch (const ordered_json::parse_error& e) {
      auto [line, col] = LineColumnAt(text, e.byte == 0 ? 0 : e.byte - 1);
      throw FileError(display_path, line, col, "not valid JSON: " + ParseErrorReason(e.what()) +
                                                   "; gpuprep leaves the file as it is: correct it by hand");
    }
    if (!doc.is_object())
      throw FileError(display_path, 1, 1,
                      "Docker's configuration must be a JSON object, found " + std::string(doc.type_name()));
  }

  DaemonJsonEdit r;
  bool created = false;
  ordered_json& runtimes = ObjectAt(doc, "runtimes", "runtimes", text, display_path, r.changes, created);
  const std::string rt_path = "runtimes." + want.runtime;
  auto rt = runtimes.find(want.runtime);
  if (rt == runtimes.end() || rt->is_null()) {
    runtimes[want.runtime] = ordered_json{{"path", want.runtime_path}, {"runtimeArgs", ordered_json::array()}};
    r.changes.push_back(rt_path + ": added (path " + want.runtime_path + ")");
  } else if (!rt->is_object()) {
    FailAt(text, display_path, rt_path,
           "\"" + rt_path + "\" is " + std::string(rt->type_name()) + ", Docker expects an object; correct it by hand");
  } else {
    auto path = rt->find("path");
    const bool ours = path != rt->end() && path->is_string() &&
                      (path->get<std::string>() == want.runtime_path ||
                       EndsWith(path->get<std::string>(), "/" + want.runtime_path));
    if (!ours) {
      r.changes.push_back(rt_path + ".path: " + (path == rt->end() ? "absent" : Brief(*path)) + " -> \"" +
                          want.runtime_path + "\"");
      (*rt)["path"] = want.runtime_path;  // runtimeArgs and any other key of the entry stay
    }
  }

  if (want.default_runtime) {
    auto d = doc.find("default-runtime");
    if (d == doc.end() || !d->is_string() || d->get<std::string>() != want.runtime) {
      r.changes.push_back("default-runtime: " + (d == doc.end() ? std::string("absent") : Brief(*d)) + " -> \"" +
                          want.runtime + "\"");
      doc["default-runtime"] = want.runtime;
    }
  }

  if (want.cdi) {
    ordered_json& features = ObjectAt(doc, "features", "features", text, display_path, r.changes, created);
    auto c = features.find("cdi");
    if (c == features.end() || !c->is_boolean() || c->get<bool>() != *want.cdi) {
      r.changes.push_back("features.cdi: " + (c == features.end() ? std::string("absent") : Brief(*c)) + " -> " +
                          (*want.cdi ? "true" : "false"));
      features["cdi"] = *want.cdi;
      r.restart_required = true;
    }
  }

  r.changed = !r.changes.empty();
  if (r.changed) {
    r.text = doc.dump(4) + "\n";
    r.diff = LineDiff(text, r.text);
  }
  return r;
}

}  // namespace gp::docker
