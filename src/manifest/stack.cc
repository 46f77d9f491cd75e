// A merged stack document (after `extends:`) -> Stack, and the Stack methods (model.h).
#include <algorithm>

#include "manifest/fields.h"
#include "manifest/redist_spec.h"
#include "manifest/stack_parse.h"
#include "util/error.h"
#include "util/image_ref.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

const std::vector<std::string> kArchitectures = {"maxwell", "pascal", "volta",  "turing",
                                                 "ampere",  "ada",    "hopper", "blackwell"};
// An apt suite ("jammy", "stable/updates"): what may stand between the URL and the components.
bool ValidSuite(const std::string& s) {
  if (s.empty() || s.size() > 128 || s[0] == '/' || s[0] == '-') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-' || c == '/'))
      return false;
  return true;
}

const std::vector<std::string> kFlavours = {"proprietary", "open", "server", "server-open"};

std::string OneOf(const Node& n, const std::vector<std::string>& allowed, const std::string& what) {
  std::string v = AsString(n);
  for (const auto& a : allowed)
    if (v == a) return v;
  Fail(n.mark, "unknown " + what + " " + QuoteToken(v) + Suggestion(v, allowed, "expected one of"));
}

OsTarget ParseOs(const Node& n, const std::string& path, Origins* origins) {
  Fields f(n, path, origins);
  f.Only({"id", "version_id"});
  return {AsName(f.Require("id"), "os id"), AsName(f.Require("version_id"), "os version_id")};
}

// `version:` is a version, or `unknown` with `unknown_reason:` saying why.
Pinned ParsePinned(Fields& f, bool required) {
  Pinned p;
  const Node* v = required ? &f.Require("version") : f.Get("version");
  auto reason = f.String("unknown_reason");
  if (v && v->kind == Node::Kind::kScalar && v->scalar == "unknown") {
    p.unknown = true;
    if (!reason || Trim(*reason).empty()) Fail(v->mark, "version is unknown: add unknown_reason saying why");
    p.reason = *reason;
  } else if (v) {
    p.version = AsVersion(*v);
    if (reason)
      Fail(f.node().KeyMark("unknown_reason"), "unknown_reason is only allowed with version: unknown");
  }
  return p;
}

void ParseDriver(const Node& n, Stack& s) {
  Fields f(n, "driver", &s.origins);
  f.Only({"branch", "version", "unknown_reason", "flavour", "signed_modules", "packages",
          "fabricmanager_packages", "end_of_life"});
  const Node& branch = f.Require("branch");
  s.driver.branch = static_cast<int>(AsInt(branch));
  s.driver.version = ParsePinned(f, true);
  if (s.driver.version.known() && static_cast<int>(s.driver.version.version->major()) != s.driver.branch)
    Fail(f.node().Find("version")->mark, "driver version " + s.driver.version.version->str() +
                                             " is not on branch " + std::to_string(s.driver.branch));
  if (const Node* fl = f.Get("flavour")) s.driver.flavour = OneOf(*fl, kFlavours, "driver flavour");
  s.driver.signed_modules = f.Bool("signed_modules").value_or(false);
  if (auto eol = f.String("end_of_life")) {
    const std::string& e = *eol;
    const bool ok = e.size() == 7 && e[4] == '-' && e.find_first_not_of("0123456789-") == std::string::npos &&
                    e.substr(5) >= "01" && e.substr(5) <= "12";
    if (!ok) Fail(f.node().Find("end_of_life")->mark, "end_of_life must be a month, YYYY-MM (e.g. 2026-06)");
    s.driver.end_of_life = e;
  }
  if (const Node* p = f.Get("packages")) s.driver.packages = ParsePackages(*p, "driver.packages");
  if (const Node* p = f.Get("fabricmanager_packages"))
    s.driver.fabricmanager_packages = ParsePackages(*p, "driver.fabricmanager_packages");
  // Fabric Manager must run at exactly the driver's version: Ubuntu's cuda-drivers-fabricmanager-535 depends
  // on nvidia-fabricmanager-535 (= the driver's version)
  // (https://packages.ubuntu.com/jammy/cuda-drivers-fabricmanager-535).
  if (s.driver.version.known()) {
    const Node* fm = f.node().Find("fabricmanager_packages");
    for (size_t i = 0; i < s.driver.fabricmanager_packages.size(); ++i) {
      const auto& p = s.driver.fabricmanager_packages[i];
      if (FabricPackage(p) || p.version.empty() ||
          DebVersion::Parse(p.version).upstream == s.driver.version.version->str())
        continue;
      Fail(fm->items[i].mark, "fabric manager " + p.name + "=" + p.version +
                                  " does not match driver version " + s.driver.version.version->str());
    }
  }
}

void ParseComponent(const Node& n, const std::string& name, bool takes_cuda_major, ComponentSpec& c,
                    Origins* origins) {
  Fields f(n, name, origins);
  const bool redist = name == "cuda" || name == "cudnn";  // NCCL has no redistrib JSON
  if (takes_cuda_major)
    f.Only(
        {"enabled", "optional", "version", "unknown_reason", "cuda_major", "packages", "source", "redist"});
  else
    f.Only({"enabled", "optional", "version", "unknown_reason", "packages", "source", "redist"});
  c.enabled = f.Bool("enabled").value_or(true);
  c.optional = f.Bool("optional").value_or(false);
  c.version = ParsePinned(f, c.enabled);
  if (takes_cuda_major) {
    if (const Node* m = c.enabled ? &f.Require("cuda_major") : f.Get("cuda_major"))
      c.cuda_major = static_cast<int>(AsInt(*m));
  }
  if (const Node* p = f.Get("packages")) c.packages = ParsePackages(*p, name + ".packages");
  ParseSource(f, name, redist, c);
}

void ParseImage(const Node& n, Stack& s) {
  Fields f(n, "image", &s.origins);
  f.Only({"ref", "cuda", "cuda_unknown_reason", "driver_min_branch", "forward_compat", "digest", "mirror"});
  s.image.mirror = f.String("mirror").value_or("");
  s.image.ref = AsLine(f.Require("ref"));
  std::string why;
  const auto ref = ParseImageRef(s.image.ref, &why);  // the grammar plan, apply and launch use
  if (!ref)
    Fail(f.node().Find("ref")->mark,
         "image ref " + QuoteToken(s.image.ref) + " is not an image reference: " + why);
  const Node& cuda = f.Require("cuda");
  auto reason = f.String("cuda_unknown_reason");
  if (cuda.kind == Node::Kind::kScalar && cuda.scalar == "unknown") {
    if (!reason || Trim(*reason).empty())
      Fail(cuda.mark, "cuda is unknown: add cuda_unknown_reason saying why");
    s.image.cuda.unknown = true;
    s.image.cuda.reason = *reason;
  } else {
    s.image.cuda.version = AsVersion(cuda);
    if (reason)
      Fail(f.node().KeyMark("cuda_unknown_reason"), "cuda_unknown_reason is only allowed with cuda: unknown");
  }
  if (auto b = f.Int("driver_min_branch")) s.image.driver_min_branch = static_cast<int>(*b);
  if (const Node* fc = f.Get("forward_compat"))
    for (const Node& v : AsList(*fc)) s.image.forward_compat.push_back(AsVersion(v));
  if (auto d = f.String("digest")) {
    if (!d->empty() && !ValidDigest(*d))
      Fail(f.node().Find("digest")->mark,
           "digest " + QuoteToken(*d) + " is not \"sha256:\" and 64 lower-case hex digits");
    if (!d->empty() && !ref->digest.empty() && *d != ref->digest)
      Fail(f.node().Find("digest")->mark, "digest " + QuoteToken(*d) + " is not the digest image ref names");
    s.image.digest = *d;
  }
  if (!s.image.mirror.empty() && !ValidImageMirror(s.image.mirror))
    Fail(f.node().Find("mirror")->mark,
         "image mirror " + QuoteToken(s.image.mirror) + " is not HOST[:PORT][/PREFIX] (a registry, no tag)");
  if (!s.image.mirror.empty() && s.image.digest.empty())
    Fail(f.node().Find("mirror")->mark, "a mirror serves the image only pinned by digest: add image.digest");
  if (!s.image.mirror
           .empty()) {  // the reference apply will pull, built here once so that it cannot fail later
    try {
      (void)PullReference(*ref, s.image.digest, s.image.mirror);
    } catch (const Error& e) {
      Fail(f.node().Find("mirror")->mark, e.what());
    }
  }
}

void CheckFingerprint(Fields& f, const std::string& v) {
  if (!v.empty() && (v.size() != 40 || v.find_first_not_of("0123456789ABCDEF") != std::string::npos))
    Fail(f.node().Find("key_fingerprint")->mark, "key_fingerprint must be 40 upper-case hex digits");
}

void CheckKeyringSha(Fields& f, const std::string& v) {
  if (!v.empty() && (v.size() != 64 || v.find_first_not_of("0123456789abcdef") != std::string::npos))
    Fail(f.node().Find("keyring_sha256")->mark, "keyring_sha256 must be 64 lower-case hex digits");
}

void ParseRepositories(const Node& n, Stack& s) {
  for (const Node& item : AsList(n)) {
    s.origins["repositories." + std::to_string(s.repositories.size())] = item.mark.str();
    Fields f(item, "repositories", nullptr);
    f.Only({"name", "os", "url", "suite", "components", "keyring_url", "keyring_path", "key_fingerprint",
            "keyring_sha256", "list_path"});
    AptRepository r;
    r.name = AsName(f.Require("name"), "repository name");
    if (const Node* os = f.Get("os")) r.os = ParseOs(*os, "repositories.os", nullptr);
    r.url = AsUrl(f.Require("url"), UrlRuleKind::kApt);
    if (const Node* suite = f.Get("suite")) {
      r.suite = AsLine(*suite);
      if (r.suite != "/" && !ValidSuite(r.suite))
        Fail(suite->mark,
             "suite " + QuoteToken(r.suite) + " is not \"/\" or a suite name (letters, digits, . _ - /)");
    }
    if (const Node* c = f.Get("components"))
      for (const Node& comp : AsList(*c)) r.components.push_back(AsName(comp, "component"));
    r.keyring_url = AsUrl(f.Require("keyring_url"), UrlRuleKind::kFetch);
    r.keyring_path =
        AsConfinedPath(f.Require("keyring_path"), {"/usr/share/keyrings/", "/etc/apt/keyrings/"});
    r.key_fingerprint = f.String("key_fingerprint").value_or("");
    CheckFingerprint(f, r.key_fingerprint);
    r.keyring_sha256 = f.String("keyring_sha256").value_or("");
    CheckKeyringSha(f, r.keyring_sha256);
    const Node& list = f.Require("list_path");
    r.list_path = AsConfinedPath(list, {"/etc/apt/sources.list.d/"});
    if (!EndsWith(r.list_path, ".list"))
      Fail(list.mark, "list_path must end in .list (apt reads only those)");
    s.repositories.push_back(std::move(r));
  }
}

// `repository_overrides: {NAME: {url, keyring_url, key_fingerprint | keyring_sha256}}`: a site file (a local
// mirror, an air-gapped copy) replaces only where the named repositories are and which key signs them;
// every other field stays the stack's.
void ParseRepositoryOverrides(const Node& n, Stack& s) {
  if (n.kind != Node::Kind::kMap) Fail(n.mark, "repository_overrides must be a map of repository names");
  std::vector<std::string> names;
  for (const auto& r : s.repositories) names.push_back(r.name);
  for (size_t i = 0; i < n.fields.size(); ++i) {
    const std::string& name = n.fields[i].first;
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      Fail(n.key_marks[i], "repository_overrides: the stack has no repository " + QuoteToken(name) +
                               Suggestion(name, names, "it has"));
    }
    Fields f(n.fields[i].second, "repository_overrides." + name, &s.origins);
    f.Only({"url", "keyring_url", "key_fingerprint", "keyring_sha256"});
    // The same rules as the stack's own repositories: apt verifies what it downloads against the pinned key,
    // so a mirror may be http or file://; the keyring itself is fetched by gpuprep and must be https
    // (plain http only from loopback).
    std::optional<std::string> url, keyring_url;
    if (const Node* u = f.Get("url")) url = AsUrl(*u, UrlRuleKind::kApt);
    if (const Node* k = f.Get("keyring_url")) keyring_url = AsUrl(*k, UrlRuleKind::kFetch);
    auto fpr = f.String("key_fingerprint");
    auto sha = f.String("keyring_sha256");
    if (fpr) CheckFingerprint(f, *fpr);
    if (sha) CheckKeyringSha(f, *sha);
    if (keyring_url && !fpr && !sha)
      Fail(f.node().Find("keyring_url")->mark,
           "a new keyring_url needs its key_fingerprint or keyring_sha256");
    for (auto& r : s.repositories) {
      if (r.name != name) continue;
      if (url) r.url = *url;
      if (keyring_url) r.keyring_url = *keyring_url;
      if (fpr || sha) {
        r.key_fingerprint = fpr.value_or("");
        r.keyring_sha256 = sha.value_or("");
      }
    }
  }
}

// `boards_excluded:` / `boards_noted:` `[{pci_id: "0x2335", subsystem: "10de:18be", why: "..."}]`.
void ParseBoards(const Node& n, const std::string& key, std::vector<ExcludedBoard>& out, Stack& s) {
  for (const Node& item : AsList(n)) {
    Fields f(item, key, &s.origins);
    f.Only({"pci_id", "subsystem", "why"});
    ExcludedBoard b;
    const Node& id = f.Require("pci_id");
    b.pci_id = ToLower(AsString(id));
    if (b.pci_id.size() != 6 || !StartsWith(b.pci_id, "0x") ||
        b.pci_id.find_first_not_of("0123456789abcdef", 2) != std::string::npos)
      Fail(id.mark, QuoteToken(id.scalar) + " is not a PCI device id (like \"0x2335\")");
    if (const Node* sub = f.Get("subsystem")) {
      b.subsystem = ToLower(AsString(*sub));
      if (b.subsystem.size() != 9 || b.subsystem[4] != ':' ||
          b.subsystem.find_first_not_of("0123456789abcdef:") != std::string::npos ||
          b.subsystem.rfind(':') != 4)
        Fail(sub->mark, QuoteToken(sub->scalar) + " is not a PCI subsystem (like \"10de:220b\")");
    }
    b.why = AsLine(f.Require("why"));
    out.push_back(std::move(b));
  }
}

void ParseWorkload(const Node& n, Stack& s) {
  Fields f(n, "workload", &s.origins);
  f.Only({"profile", "min_cpus_per_gpu", "min_ram_per_gpu", "min_shm_per_gpu", "task", "nodes"});
  if (const Node* nodes = f.Get("nodes")) {
    const long long v = AsInt(*nodes);
    if (v < 1 || v > kMaxWorkloadNodes)
      Fail(nodes->mark,
           "workload.nodes: must be a whole number from 1 to " + std::to_string(kMaxWorkloadNodes));
    s.workload.nodes = static_cast<int>(v);
  }
  if (const Node* p = f.Get("profile")) s.workload.profile = AsName(*p, "workload profile");
  if (const Node* t = f.Get("task")) {  // read beside its document by the loader (loader.cc ReadTask)
    const std::string path = AsString(*t);
    if (std::string why = CheckRelativePath(path); !why.empty()) Fail(t->mark, "workload.task: " + why);
    s.workload.task = WorkloadTask{path, "", ""};
  }
  s.workload.min_cpus_per_gpu = static_cast<int>(f.Int("min_cpus_per_gpu").value_or(0));
  if (const Node* r = f.Get("min_ram_per_gpu")) s.workload.min_ram_per_gpu = AsSize(*r);
  if (const Node* r = f.Get("min_shm_per_gpu")) s.workload.min_shm_per_gpu = AsBytes(*r);
}

}  // namespace

std::vector<AptPackage> ParsePackages(const Node& list, const std::string& path) {
  std::vector<AptPackage> out;
  for (const Node& item : AsList(list)) {
    Fields f(item, path, nullptr);
    f.Only({"name", "version", "upstream"});
    AptPackage p;
    p.name = AsDebName(f.Require("name"));
    if (const Node* v = f.Get("version")) p.version = AsDebVersion(*v);
    if (const Node* u = f.Get("upstream")) p.upstream = AsDebVersion(*u);
    if (!p.version.empty() && !p.upstream.empty())
      Fail(item.KeyMark("upstream"), "give either version (the exact dpkg version) or upstream, not both");
    out.push_back(std::move(p));
  }
  return out;
}

Stack StackFromTree(const Node& root) {
  Stack s;
  Fields doc(root, "", &s.origins);
  doc.Only({"apiVersion", "kind", "metadata", "os", "architectures", "repositories", "repository_overrides",
            "legacy", "driver", "cuda", "cudnn", "nccl", "container_toolkit", "image", "docker", "workload",
            "notes", "boards_excluded", "boards_noted"});
  CheckHeader(doc, {"Stack"});
  Fields meta(doc.Require("metadata"), "metadata", &s.origins);
  meta.Only({"name", "description"});
  s.name = AsName(meta.Require("name"), "stack name");
  s.description = meta.String("description").value_or("");
  const Node& os = doc.Require("os");
  for (const Node& item : AsList(os)) s.os.push_back(ParseOs(item, "os", nullptr));
  if (s.os.empty()) Fail(os.mark, "os: the list is empty");
  const Node& arch = doc.Require("architectures");
  for (const Node& item : AsList(arch))
    s.architectures.push_back(OneOf(item, kArchitectures, "architecture"));
  if (const Node* b = doc.Get("boards_excluded")) ParseBoards(*b, "boards_excluded", s.boards_excluded, s);
  if (const Node* b = doc.Get("boards_noted")) ParseBoards(*b, "boards_noted", s.boards_noted, s);
  if (const Node* r = doc.Get("repositories")) ParseRepositories(*r, s);
  if (const Node* o = doc.Get("repository_overrides")) ParseRepositoryOverrides(*o, s);
  s.legacy = doc.Bool("legacy").value_or(false);
  ParseDriver(doc.Require("driver"), s);
  ParseComponent(doc.Require("cuda"), "cuda", false, s.cuda, &s.origins);
  ParseComponent(doc.Require("cudnn"), "cudnn", true, s.cudnn, &s.origins);
  ParseComponent(doc.Require("nccl"), "nccl", true, s.nccl, &s.origins);
  ParseComponent(doc.Require("container_toolkit"), "container_toolkit", false, s.container_toolkit,
                 &s.origins);
  ParseImage(doc.Require("image"), s);
  if (const Node* d = doc.Get("docker")) ParseDocker(*d, s);
  if (const Node* w = doc.Get("workload")) ParseWorkload(*w, s);
  s.notes = doc.String("notes").value_or("");
  return s;
}

bool ExcludedBoard::Matches(const GpuModel& g) const {
  if (std::find(g.pci_ids.begin(), g.pci_ids.end(), pci_id) == g.pci_ids.end()) return false;
  return subsystem.empty() ||
         std::find(g.subsystems.begin(), g.subsystems.end(), subsystem) != g.subsystems.end();
}

bool Stack::Claims(const GpuModel& g) const {
  if (std::find(architectures.begin(), architectures.end(), g.arch) == architectures.end()) return false;
  return std::none_of(boards_excluded.begin(), boards_excluded.end(),
                      [&](const ExcludedBoard& b) { return b.Matches(g); });
}

bool Stack::SupportsOs(const std::string& id, const std::string& version_id) const {
  for (const auto& t : os)
    if (t.id == id && t.version_id == version_id) return true;
  return false;
}

std::vector<const AptRepository*> Stack::RepositoriesFor(const std::string& id,
                                                         const std::string& version_id) const {
  std::vector<const AptRepository*> out;
  for (const auto& r : repositories)
    if (r.os.id.empty() || (r.os.id == id && r.os.version_id == version_id)) out.push_back(&r);
  return out;
}

}  // namespace gp::manifest
