#include "redist/redistrib.h"

#include <nlohmann/json.hpp>

#include "redist/error.h"
#include "redist/paths.h"
#include "util/strings.h"

namespace gp::redist {
namespace {

using nlohmann::json;

const json& Member(const json& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) throw RedistError(where + ": no \"" + key + "\"");
  return obj.at(key);
}

std::string Str(const json& obj, const std::string& key, const std::string& where) {
  const json& v = Member(obj, key, where);
  if (!v.is_string()) throw RedistError(where + "." + key + ": not a string");
  return v.get<std::string>();
}

bool AllOf(const std::string& s, const char* allowed) {
  return s.find_first_not_of(allowed) == std::string::npos;
}

}  // namespace

std::string PlatformFor(const std::string& arch) {
  if (arch == "x86_64") return "linux-x86_64";
  if (arch == "aarch64") return "linux-sbsa";
  if (arch == "ppc64le") return "linux-ppc64le";  // CUDA 12.x only; the JSON says whether it has one
  return "";
}

bool VersionMatches(const std::string& found, const std::string& pinned) {
  if (pinned.empty()) return false;
  return found == pinned || (StartsWith(found, pinned) && found[pinned.size()] == '.');
}

std::string VersionProblem(const RedistArchive& a, const std::string& layer, const std::string& pinned) {
  if (layer != "cuda")
    return VersionMatches(a.version, pinned)
               ? ""
               : a.component + " is " + a.version + ", the stack pins " + pinned;
  if (a.release_label != pinned)
    return "the redistrib JSON is release " + a.release_label + ", the stack pins " + pinned;
  if (a.component != "cuda_cudart" && a.component != "cuda_nvcc") return "";
  const auto dot = pinned.find('.');
  const auto second = dot == std::string::npos ? dot : pinned.find('.', dot + 1);
  const std::string minor = pinned.substr(0, second);  // 12.2.2 -> 12.2
  return VersionMatches(a.version, minor)
             ? ""
             : a.component + " is " + a.version + ", the stack pins CUDA " + pinned;
}

RedistArchive FindArchive(const std::string& json_text, const std::string& component,
                          const std::string& platform, std::optional<int> cuda_major) {
  json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw RedistError("not a redistrib JSON object");
  RedistArchive a;
  a.component = component;
  if (doc.contains("release_label") && doc["release_label"].is_string())
    a.release_label = doc["release_label"];
  const json& comp = Member(doc, component, "redistrib");
  a.version = Str(comp, "version", component);
  const json* entry = &Member(comp, platform, component);
  std::string where = component + "." + platform;
  if (!entry->contains("relative_path")) {  // cuDNN 9: one level per CUDA major
    if (!cuda_major) throw RedistError(where + ": has per-CUDA archives; the stack must say cuda_major");
    const std::string variant = "cuda" + std::to_string(*cuda_major);
    entry = &Member(*entry, variant, where);
    where += "." + variant;
  }
  a.relative_path = Str(*entry, "relative_path", where);
  a.sha256 = Str(*entry, "sha256", where);
  const std::string size = Str(*entry, "size", where);
  if (!IsSafeRelativePath(a.relative_path) ||
      !AllOf(a.relative_path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/") ||
      !EndsWith(a.relative_path, ".tar.xz"))
    throw RedistError(where + ".relative_path: \"" + a.relative_path +
                      "\" is not a relative .tar.xz path inside the redistributable tree");
  if (a.sha256.size() != 64 || !AllOf(a.sha256, "0123456789abcdef"))
    throw RedistError(where + ".sha256: not 64 lower-case hex digits");
  if (size.empty() || size.size() > 15 || !AllOf(size, "0123456789"))
    throw RedistError(where + ".size: not a decimal byte count");
  a.size = std::stoull(size);
  std::string name = a.relative_path.substr(a.relative_path.rfind('/') + 1);
  a.top_dir = name.substr(0, name.size() - 7);
  return a;
}

}  // namespace gp::redist
