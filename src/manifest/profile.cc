#include "manifest/profile.h"

#include "manifest/fields.h"
#include "manifest/tree.h"
#include "util/image_ref.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

bool EnvName(const std::string& s) {
  if (s.empty() || s.size() > 256 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

// An absolute, normalised path docker can take in -v SRC:DST[:ro] (no ':' or ',').
std::string MountPath(const Node& n, const std::string& what) {
  std::string v = AsLine(n);
  bool ok = !v.empty() && v[0] == '/' && v.find_first_of(":,") == std::string::npos;
  for (const auto& part : Split(v, '/')) ok = ok && part != "." && part != "..";
  ok = ok && v.find("//") == std::string::npos && (v.size() == 1 || v.back() != '/');
  if (!ok)
    Fail(n.mark, what + ": must be an absolute, normalised path without ':' or ',', got " + QuoteToken(v));
  return v;
}

bool PortRange(const std::string& s) {
  auto parts = Split(s, '-');
  if (parts.empty() || parts.size() > 2) return false;
  for (const auto& p : parts) {
    auto v = ParseUnsigned(p);
    if (!v || *v < 1 || *v > 65535 || p.size() > 5) return false;
  }
  return true;
}

bool Ipv4(const std::string& s) {
  auto parts = Split(s, '.');
  if (parts.size() != 4) return false;
  for (const auto& p : parts) {
    auto v = ParseUnsigned(p);
    if (!v || *v > 255 || p.empty() || p.size() > 3) return false;
  }
  return true;
}

}  // namespace

bool ValidPortPublish(const std::string& value) {
  if (value.empty() || value.size() > 64) return false;
  std::string v = value;
  const size_t slash = v.find('/');
  if (slash != std::string::npos) {
    const std::string proto = v.substr(slash + 1);
    if (proto != "tcp" && proto != "udp" && proto != "sctp") return false;
    v = v.substr(0, slash);
  }
  std::string ip;
  if (!v.empty() && v[0] == '[') {
    const size_t close = v.find("]:");
    if (close == std::string::npos) return false;
    ip = v.substr(1, close - 1);
    if (ip.empty() || ip.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) return false;
    v = v.substr(close + 2);
  }
  auto parts = Split(v, ':');
  if (ip.empty() && parts.size() == 3) {
    if (!Ipv4(parts[0])) return false;
    parts.erase(parts.begin());
  }
  if (parts.empty() || parts.size() > 2) return false;
  for (const auto& p : parts)
    if (!PortRange(p)) return false;
  return true;
}

namespace {

// The container settings of spec: image and workdir checked with the rules launch applies to --image and
// --workdir, so that `manifest validate` refuses what launch would; ipc, shm and the data-loader hint.
void ReadProfileContainer(Fields& spec, ProfileDoc& p) {
  if (const Node* n = spec.Get("image")) {
    p.image = AsLine(*n);
    std::string why;
    if (!ParseImageRef(p.image, &why))
      Fail(n->mark, "spec.image: " + QuoteToken(p.image) + " is not an image reference: " + why);
  }
  if (const Node* n = spec.Get("ipc")) {
    p.ipc = AsLine(*n);
    if (p.ipc != "host" && p.ipc != "private")
      Fail(n->mark, "spec.ipc: expected host or private, got " + QuoteToken(p.ipc));
  }
  if (const Node* n = spec.Get("shm")) {
    p.shm = AsLine(*n);
    if (p.shm != "auto" && !ParseBytes(p.shm))
      Fail(n->mark, "spec.shm: not a size: " + QuoteToken(p.shm) + " (examples: auto, 64m, 16g)");
  }
  if (const Node* n = spec.Get("shm_per_gpu")) p.shm_per_gpu = AsBytes(*n);
  p.dataloader_heavy = spec.Bool("dataloader_heavy").value_or(false);
  if (const Node* n = spec.Get("workdir")) {
    p.workdir = AsLine(*n);
    if (!ValidContainerWorkdir(p.workdir))
      Fail(n->mark,
           "spec.workdir: must be an absolute path inside the container, got " + QuoteToken(p.workdir));
  }
}

// The lists of spec: mounts, environment variables and published ports, each entry checked.
void ReadProfileLists(Fields& spec, ProfileDoc& p) {
  if (const Node* n = spec.Get("mounts")) {
    for (const Node& item : AsList(*n)) {
      Fields m(item, "spec.mounts[]", nullptr);
      m.Only({"source", "target", "read_only"});
      ProfileMount mount;
      mount.source = MountPath(m.Require("source"), "spec.mounts[].source");
      mount.target = MountPath(m.Require("target"), "spec.mounts[].target");
      mount.read_only = m.Bool("read_only").value_or(false);
      p.mounts.push_back(mount);
    }
  }
  if (const Node* n = spec.Get("env")) {
    if (n->kind != Node::Kind::kMap) Fail(n->mark, "spec.env: expected a map of NAME: value");
    for (size_t i = 0; i < n->fields.size(); ++i) {
      const auto& [name, value] = n->fields[i];
      if (!EnvName(name))
        Fail(n->key_marks[i], "spec.env: invalid environment variable name " + QuoteToken(name));
      p.env.emplace_back(name, AsLine(value));
    }
  }
  if (const Node* n = spec.Get("ports")) {
    for (const Node& item : AsList(*n)) {
      std::string port = AsLine(item);
      if (!ValidPortPublish(port))
        Fail(item.mark,
             "spec.ports: " + QuoteToken(port) + " is not [IP:][HOST_PORT:]CONTAINER_PORT[/tcp|udp|sctp]");
      p.ports.push_back(port);
    }
  }
}

}  // namespace

ProfileDoc ParseProfileDoc(const std::string& text, const std::string& display_path) {
  Node root = ParseTree(text, display_path);
  ProfileDoc p;
  Fields doc(root, "", nullptr);
  doc.Only({"apiVersion", "kind", "metadata", "spec"});
  CheckHeader(doc, {"Profile"});
  Fields meta(doc.Require("metadata"), "metadata", nullptr);
  meta.Only({"name", "description"});
  p.name = AsName(meta.Require("name"), "profile name");
  p.description = meta.String("description").value_or("");
  const Node* spec_node = doc.Get("spec");
  if (!spec_node) return p;
  Fields spec(*spec_node, "spec", nullptr);
  spec.Only({"image", "ipc", "shm", "shm_per_gpu", "dataloader_heavy", "workdir", "mounts", "env", "ports"});
  ReadProfileContainer(spec, p);
  ReadProfileLists(spec, p);
  return p;
}

}  // namespace gp::manifest
