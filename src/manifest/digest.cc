// Pinned content, content hashes and the shipped-stacks lock (digest.h).
#include "manifest/digest.h"

#include <algorithm>

#include "manifest/loader.h"
#include "sys/sha256.h"
#include "util/embedded.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

constexpr char kLockPath[] = "manifests/shipped-stacks.lock";
constexpr char kHashPrefix[] = "sha256:";

std::string PinText(const Pinned& p) { return p.known() ? p.version->str() : "unknown"; }

std::string PackagesText(const std::vector<AptPackage>& pkgs) {
  std::vector<std::string> parts;
  parts.reserve(pkgs.size());
  for (const auto& p : pkgs)
    parts.push_back(p.name + (p.version.empty() ? "" : "=" + p.version) +
                    (p.upstream.empty() ? "" : "@" + p.upstream));
  return Join(parts, ",");
}

void AddComponent(PinnedContent& out, const std::string& name, const ComponentSpec& c) {
  out.emplace_back(name + ".enabled", c.enabled ? "true" : "false");
  if (!c.enabled) return;
  out.emplace_back(name + ".version", PinText(c.version));
  if (c.cuda_major) out.emplace_back(name + ".cuda_major", std::to_string(*c.cuda_major));
  out.emplace_back(name + ".source", c.source);
  if (c.source == "redist") {
    out.emplace_back(name + ".redist.release", c.redist.release);
    out.emplace_back(name + ".redist.components", Join(c.redist.components, ","));
  }
  out.emplace_back(name + ".packages", PackagesText(c.packages));
}

}  // namespace

PinnedContent PinnedContentOf(const Stack& s) {
  PinnedContent out;
  out.emplace_back("driver.branch", std::to_string(s.driver.branch));
  out.emplace_back("driver.version", PinText(s.driver.version));
  out.emplace_back("driver.flavour", s.driver.flavour);
  if (s.driver.signed_modules) out.emplace_back("driver.signed_modules", "true");
  out.emplace_back("driver.packages", PackagesText(s.driver.packages));
  out.emplace_back("driver.fabricmanager_packages", PackagesText(s.driver.fabricmanager_packages));
  AddComponent(out, "cuda", s.cuda);
  AddComponent(out, "cudnn", s.cudnn);
  AddComponent(out, "nccl", s.nccl);
  AddComponent(out, "container_toolkit", s.container_toolkit);
  out.emplace_back("image.ref", s.image.ref);
  if (!s.image.digest.empty()) out.emplace_back("image.digest", s.image.digest);
  if (s.docker.present) {
    out.emplace_back("docker.engine", s.docker.engine);
    out.emplace_back("docker.packages", PackagesText(s.docker.packages));
    out.emplace_back("docker.gpu_access", s.docker.gpu_access);
    out.emplace_back("docker.default_runtime", s.docker.default_runtime ? "true" : "false");
    if (!s.docker.toolkit_mode.empty()) out.emplace_back("docker.toolkit_mode", s.docker.toolkit_mode);
  }
  return out;
}

std::string ComputeContentHash(const Stack& s) {
  std::string text = "gpuprep stack content v1\n";
  for (const auto& [field, value] : PinnedContentOf(s)) text += field + "=" + value + "\n";
  return kHashPrefix + sys::Sha256Hex(text);
}

std::string ContentHash(const Stack& s) {
  // An embedded stack's source is "embedded:NAME"; its lock entry is its hash
  // (tests/manifest/digest_test.cc).
  if (StartsWith(s.source, "embedded:")) {
    const std::string name = s.source.substr(9);
    for (const auto& e : ShippedStacks())
      if (e.name == name) return e.hash;
  }
  return ComputeContentHash(s);
}

bool IsContentHash(const std::string& s) {
  const size_t n = sizeof(kHashPrefix) - 1;
  return s.size() == n + 64 && StartsWith(s, kHashPrefix) &&
         s.find_first_not_of("0123456789abcdef", n) == std::string::npos;
}

std::vector<ShippedStack> ParseShippedStacks(const std::string& text, const std::string& display_path) {
  std::vector<ShippedStack> out;
  int line_no = 0;
  for (const auto& raw : Split(text, '\n')) {
    ++line_no;
    const std::string line(Trim(raw));
    if (line.empty() || line[0] == '#') continue;
    const auto parts = SplitWords(line);
    if (parts.size() != 2 || !ValidName(parts[0]) || !IsContentHash(parts[1]))
      throw FileError(display_path, line_no, 1, "expected \"NAME sha256:<64 hex>\", got " + QuoteToken(line));
    for (const auto& e : out)
      if (e.name == parts[0])
        throw FileError(display_path, line_no, 1, "stack " + parts[0] + " is listed twice");
    out.push_back({parts[0], parts[1]});
  }
  return out;
}

const std::vector<ShippedStack>& ShippedStacks() {
  static const std::vector<ShippedStack> kLock = [] {
    const EmbeddedFile* f = FindEmbedded(kLockPath);
    return f ? ParseShippedStacks(std::string(f->data, f->size), kLockPath) : std::vector<ShippedStack>{};
  }();
  return kLock;
}

std::optional<std::string> EmbeddedStackWithHash(const std::string& hash,
                                                 const std::vector<std::string>& prefer) {
  const auto names = EmbeddedStackNames();
  std::vector<std::string> same;
  for (const auto& e : ShippedStacks())
    if (e.hash == hash && std::find(names.begin(), names.end(), e.name) != names.end())
      same.push_back(e.name);
  for (const auto& p : prefer)
    if (std::find(same.begin(), same.end(), p) != same.end()) return p;
  if (same.empty()) return std::nullopt;
  return same.front();
}

std::optional<std::string> EmbeddedIdentity(const Stack& s) {
  std::vector<std::string> prefer = {s.name};
  prefer.insert(prefer.end(), s.extends_chain.rbegin(), s.extends_chain.rend());
  return EmbeddedStackWithHash(ContentHash(s), prefer);
}

std::vector<PinChange> PinChanges(const Stack& from, const Stack& to) {
  const PinnedContent a = PinnedContentOf(from), b = PinnedContentOf(to);
  auto find = [](const PinnedContent& c, const std::string& field) -> const std::string* {
    for (const auto& [f, v] : c)
      if (f == field) return &v;
    return nullptr;
  };
  std::vector<PinChange> out;
  for (const auto& [field, value] : b) {
    const std::string* old = find(a, field);
    if (!old || *old != value) out.push_back({field, old ? *old : "", value});
  }
  for (const auto& [field, value] : a)
    if (!find(b, field)) out.push_back({field, value, ""});
  return out;
}

std::string DocumentsSha256(const Stack& s) {
  if (s.documents.size() == 1) return sys::Sha256Hex(s.documents.front());
  std::string list;
  for (const auto& d : s.documents) list += sys::Sha256Hex(d) + "\n";
  return sys::Sha256Hex(list);
}

}  // namespace gp::manifest
