// Profile YAML -> launch::Profile. yaml-cpp is used only here (TEAM.md); every error points at the
// offending node (1-based line and column).
#include "launch/profile.h"

#include <yaml-cpp/yaml.h>

#include "launch/validate.h"
#include "sys/fs.h"
#include "util/embedded.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::launch {
namespace {

constexpr const char* kPrefix = "manifests/profiles/";

class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void Fail(const YAML::Node& n, const std::string& msg) const {
    const YAML::Mark m = n.Mark();
    throw FileError(path_, m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1, msg);
  }

  // Rejects keys not in `allowed`, with a "did you mean".
  void Keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& where) const {
    if (!map.IsMap()) Fail(map, where + ": expected a mapping");
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      bool ok = false;
      for (const auto& a : allowed) ok = ok || a == key;
      if (ok) continue;
      std::string msg = "unknown key \"" + key + "\" in " + where;
      if (auto guess = DidYouMean(key, allowed)) msg += " (did you mean \"" + *guess + "\"?)";
      Fail(kv.first, msg);
    }
  }

  std::string Str(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) Fail(n, what + ": expected a string");
    return n.Scalar();
  }

  bool Bool(const YAML::Node& n, const std::string& what) const {
    const std::string s = Str(n, what);
    if (s == "true") return true;
    if (s == "false") return false;
    Fail(n, what + ": expected true or false, got \"" + s + "\"");
  }

  uint64_t Bytes(const YAML::Node& n, const std::string& what) const {
    const std::string s = Str(n, what);
    auto b = ParseBytes(s);
    if (!b) Fail(n, what + ": not a size: \"" + s + "\" (examples: 64m, 16g)");
    return *b;
  }

  Profile Parse(const std::string& text) const {
    YAML::Node doc;
    try {
      doc = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      throw FileError(path_, e.mark.line + 1, e.mark.column + 1, e.msg);
    }
    if (!doc.IsMap()) Fail(doc, "expected a gpuprep/v1 Profile document");
    Keys(doc, {"apiVersion", "kind", "metadata", "spec"}, "the document");
    if (!doc["apiVersion"] || Str(doc["apiVersion"], "apiVersion") != "gpuprep/v1")
      Fail(doc["apiVersion"] ? doc["apiVersion"] : doc, "apiVersion: expected \"gpuprep/v1\"");
    if (!doc["kind"] || Str(doc["kind"], "kind") != "Profile")
      Fail(doc["kind"] ? doc["kind"] : doc, "kind: expected \"Profile\"");
    Profile p;
    const YAML::Node meta = doc["metadata"];
    if (!meta) Fail(doc, "missing required key \"metadata\"");
    Keys(meta, {"name", "description"}, "metadata");
    if (!meta["name"]) Fail(meta, "metadata: missing required key \"name\"");
    p.name = Str(meta["name"], "metadata.name");
    if (meta["description"]) p.description = Str(meta["description"], "metadata.description");
    const YAML::Node spec = doc["spec"];
    if (!spec) return p;
    Keys(spec,
         {"image", "ipc", "shm", "shm_per_gpu", "dataloader_heavy", "workdir", "mounts", "env", "ports"},
         "spec");
    if (spec["image"]) p.image = Str(spec["image"], "spec.image");
    if (spec["ipc"]) {
      p.ipc = Str(spec["ipc"], "spec.ipc");
      if (p.ipc != "host" && p.ipc != "private")
        Fail(spec["ipc"], "spec.ipc: expected host or private, got \"" + p.ipc + "\"");
    }
    if (spec["shm"]) {
      p.shm = Str(spec["shm"], "spec.shm");
      if (p.shm != "auto") Bytes(spec["shm"], "spec.shm");
    }
    if (spec["shm_per_gpu"]) p.shm_per_gpu = Bytes(spec["shm_per_gpu"], "spec.shm_per_gpu");
    if (spec["dataloader_heavy"]) p.dataloader_heavy = Bool(spec["dataloader_heavy"], "spec.dataloader_heavy");
    if (spec["workdir"]) p.workdir = Str(spec["workdir"], "spec.workdir");
    if (const YAML::Node mounts = spec["mounts"]) {
      if (!mounts.IsSequence()) Fail(mounts, "spec.mounts: expected a list");
      for (const YAML::Node& m : mounts) {
        Keys(m, {"source", "target", "read_only"}, "spec.mounts[]");
        if (!m["source"] || !m["target"]) Fail(m, "spec.mounts[]: needs source and target");
        Mount mount{Str(m["source"], "source"), Str(m["target"], "target"), false};
        if (m["read_only"]) mount.read_only = Bool(m["read_only"], "read_only");
        if (mount.target.empty() || mount.target[0] != '/')
          Fail(m["target"], "spec.mounts[].target: must be an absolute path, got \"" + mount.target + "\"");
        p.mounts.push_back(mount);
      }
    }
    if (const YAML::Node env = spec["env"]) {
      if (!env.IsMap()) Fail(env, "spec.env: expected a mapping of NAME: value");
      for (const auto& kv : env) {
        const std::string name = kv.first.as<std::string>();
        if (!ValidEnvName(name)) Fail(kv.first, "spec.env: invalid environment variable name \"" + name + "\"");
        p.env.emplace_back(name, Str(kv.second, "spec.env." + name));
      }
    }
    if (const YAML::Node ports = spec["ports"]) {
      if (!ports.IsSequence()) Fail(ports, "spec.ports: expected a list");
      for (const YAML::Node& port : ports) p.ports.push_back(Str(port, "spec.ports[]"));
    }
    return p;
  }

 private:
  std::string path_;
};

}  // namespace

Profile ParseProfile(const std::string& text, const std::string& display_path) {
  return Parser(display_path).Parse(text);
}

std::vector<std::string> EmbeddedProfileNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile* f : ListEmbedded(kPrefix)) {
    std::string n = std::string(f->path).substr(std::string(kPrefix).size());
    if (EndsWith(n, ".yaml")) names.push_back(n.substr(0, n.size() - 5));
  }
  return names;
}

Profile LoadProfile(const std::string& spec, const sys::Fs& fs) {
  const bool is_path = spec.find('/') != std::string::npos || EndsWith(spec, ".yaml") || EndsWith(spec, ".yml");
  if (!is_path) {
    const EmbeddedFile* f = FindEmbedded(std::string(kPrefix) + spec + ".yaml");
    if (!f) {
      const auto names = EmbeddedProfileNames();
      std::string msg = "unknown profile \"" + spec + "\"";
      if (auto guess = DidYouMean(spec, names)) msg += " (did you mean \"" + *guess + "\"?)";
      else msg += " (profiles: " + Join(names, ", ") + ")";
      throw FlagError("--profile", msg);
    }
    Profile p = ParseProfile(std::string(f->data, f->size), f->path);
    p.source = "embedded:" + spec;
    return p;
  }
  auto text = fs.Read(spec);
  if (!text) throw FlagError("--profile", "cannot read " + spec);
  Profile p = ParseProfile(*text, spec);
  p.source = spec;
  return p;
}

}  // namespace gp::launch
