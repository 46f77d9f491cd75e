// Resolving --manifest specs and `extends:`, whole-stack checks, validation of any document, and the
// default stack choice (loader.h). YAML itself is handled in tree.cc; fields in stack.cc / compat.cc.
#include "manifest/loader.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>

#include "manifest/fields.h"
#include "manifest/prebuilt.h"
#include "manifest/prices_doc.h"
#include "manifest/source.h"
#include "manifest/stack_parse.h"
#include "manifest/tree.h"
#include "sys/fs.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "sys/http.h"
#include "util/embedded.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

constexpr char kStackDir[] = "manifests/stacks/";
constexpr char kSiteDir[] = "/etc/gpuprep/";  // the site file's directory (docs/cli.md "Which stack")
constexpr int kMaxExtendsDepth = 16;

struct Source {
  std::string display;  // what errors and origins name
  std::string id;       // identity for cycle detection (embedded path, absolute file path, URL)
  std::string text;     // unless `file` is set
  bool embedded = false;
  bool url = false;                    // fetched from a URL
  const EmbeddedFile* file = nullptr;  // an embedded file as built: its tree was parsed at build time
};

bool IsUrl(const std::string& s) { return ShapeOf(s) == SourceShape::kUrl; }

// A file named in a document (extends:, workload.task): read as written, identified by its absolute path.
ManifestSource FileAt(const std::string& path) {
  return ManifestSource{ManifestSource::Kind::kFile, sys::AbsoluteFromCwd(path), path};
}

const EmbeddedFile* EmbeddedStack(const std::string& name) {
  return FindEmbedded(std::string(kStackDir) + name + ".yaml");
}

std::string AbsolutePath(const std::string& path) { return sys::AbsoluteFromCwd(path); }

std::string Dirname(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// "" when the file `path` that the document `doc` names resolves, every symbolic link and ".." followed
// through ctx.fs, below `doc`'s own directory or under /etc/gpuprep/; else why, for the error at the value.
// So a stack names no file elsewhere on the machine (a private key, another user's file), by path or by link.
std::string OutsideRoots(const std::string& path, const std::string& doc, const LoadContext& ctx) {
  if (!ctx.fs) return "";  // ReadFrom says there is no filesystem
  const std::string dir = Dirname(AbsolutePath(doc));
  const sys::ResolvedPath target = sys::ResolvePath(*ctx.fs, AbsolutePath(path));
  if (!target.error.empty()) return TerminalSafe(target.error);
  for (const std::string& root : {dir, std::string(kSiteDir)}) {
    const std::string real = sys::ResolvePath(*ctx.fs, root).path;
    if (real == "/" || StartsWith(target.path, real + "/")) return "";
  }
  return std::string(target.through_link ? "leads through a symbolic link to " : "leads to ") +
         TerminalSafe(target.path) + ", outside " + TerminalSafe(dir) +
         " (the directory of the file that names it) and " + kSiteDir;
}

// Reads a file or URL (never an embedded stack); `fail` reports a message at the caller's position (or
// without one).
template <typename FailFn>
Source ReadFrom(const ManifestSource& from, const LoadContext& ctx, FailFn fail) {
  Source src;
  src.display = from.written;
  const std::string& where = from.value;
  if (from.url()) {
    if (std::string why = CheckUrl(where, UrlRule::kFetch); !why.empty()) fail(why);
    if (!ctx.http) fail("cannot fetch " + where + ": no HTTP client here");
    sys::HttpRequest req;
    req.url = where;
    req.timeout = std::chrono::seconds(30);
    req.max_body = kMaxManifestBytes;
    auto resp = ctx.http->Send(req);
    if (!resp.ok())
      fail("cannot fetch " + where + ": " +
           (resp.error.empty() ? "HTTP status " + std::to_string(resp.status) : resp.error));
    src.id = where;
    src.url = true;
    src.text = std::move(resp.body);
    return src;
  }
  src.id = where;
  if (!ctx.fs) fail("cannot read " + from.written + ": no filesystem here");
  std::string why;
  auto text = sys::ReadWithin(*ctx.fs, src.id, from.written, kMaxManifestBytes, why);
  if (!text) fail(why);
  src.text = std::move(*text);
  return src;
}

Source FromEmbedded(const EmbeddedFile* f) {
  Source src;
  src.display = f->path;
  src.id = f->path;
  src.embedded = true;
  src.file = f;
  return src;
}

// Resolves an `extends:` value written in `child`.
Source ResolveExtends(const Node& value, const Source& child, const LoadContext& ctx) {
  std::string target = AsString(value);
  auto fail = [&](const std::string& msg) { Fail(value.mark, "extends " + QuoteToken(target) + ": " + msg); };
  if (target.empty()) fail("empty name");
  const SourceShape shape = ShapeOf(target);
  if (shape == SourceShape::kUrl)
    return ReadFrom(ManifestSource{ManifestSource::Kind::kUrl, target, target}, ctx, fail);
  if (shape == SourceShape::kName) {
    if (const EmbeddedFile* f = EmbeddedStack(target)) return FromEmbedded(f);
    if (child.embedded) fail("no embedded stack of that name" + EmbeddedNameHint(target));
  }
  if (child.embedded) fail("an embedded stack can only extend another embedded stack");
  if (child.url) fail("a stack fetched from a URL can only extend embedded stacks or URLs");
  std::string path = target[0] == '/' ? target : Dirname(child.display) + target;
  if (shape == SourceShape::kName && !(ctx.fs && ctx.fs->Exists(AbsolutePath(path))))
    fail("no embedded stack or file of that name" + EmbeddedNameHint(target));
  if (std::string why = OutsideRoots(path, child.display, ctx); !why.empty()) fail(why);
  return ReadFrom(FileAt(path), ctx, [&](const std::string& msg) { fail(msg); });
}

// The document tree of one source. Embedded files were parsed at build time (prebuilt.h): their trees are
// rebuilt from a generated table, with no YAML work; files, URLs and ParseStack text go through ParseTree.
Node TreeOf(const Source& src) {
  if (!src.file) return ParseTree(src.text, src.display);
  if (auto tree = PrebuiltTree(src.file->path)) return std::move(*tree);
  return ParseTree(std::string(src.file->data, src.file->size), src.display);
}

void EraseField(Node& map, const std::string& key) {
  for (size_t i = 0; i < map.fields.size(); ++i)
    if (map.fields[i].first == key) {
      map.fields.erase(map.fields.begin() + static_cast<long>(i));
      map.key_marks.erase(map.key_marks.begin() + static_cast<long>(i));
      return;
    }
}

// A child that knows a value the parent marked unknown replaces the parent's reason too: `version: V`
// drops the parent's `unknown_reason:`, `cuda: V` (image) its `cuda_unknown_reason:`. Otherwise the merged
// stack would hold a known value with a stale reason, refused with an error pointing into the parent.
void DropReplacedReasons(Node& parent, const Node& child) {
  if (parent.kind != Node::Kind::kMap || child.kind != Node::Kind::kMap) return;
  static const std::pair<const char*, const char*> kPairs[] = {{"version", "unknown_reason"},
                                                               {"cuda", "cuda_unknown_reason"}};
  for (const auto& [value, reason] : kPairs) {
    const Node* v = child.Find(value);
    if (v && !(v->kind == Node::Kind::kScalar && v->scalar == "unknown") && !child.Find(reason))
      EraseField(parent, reason);
  }
  for (const auto& [key, value] : child.fields)
    if (Node* p = parent.Find(key)) DropReplacedReasons(*p, value);
}

// Parses `src`, follows its `extends:` chain and returns the merged tree. `seen` holds the files on the
// current chain (for cycles); `chain` collects the extends targets, base first.
Node LoadTree(const Source& src, const LoadContext& ctx, std::vector<Source>& seen,
              std::vector<std::string>& chain, std::vector<std::string>& documents) {
  documents.push_back(src.file ? std::string(src.file->data, src.file->size) : src.text);
  Node root = TreeOf(src);
  Fields doc(root, "", nullptr);
  CheckHeader(doc, {"Stack"});
  const Node* ext = doc.Get("extends");
  if (!ext) return root;
  if (seen.size() >= kMaxExtendsDepth) Fail(ext->mark, "extends: more than 16 levels");
  Source parent = ResolveExtends(*ext, src, ctx);
  for (const Source& s : seen) {
    if (s.id != parent.id) continue;
    std::vector<std::string> names;
    bool on = false;
    for (const Source& t : seen) {
      on = on || t.id == parent.id;
      if (on) names.push_back(t.display);
    }
    names.push_back(parent.display);
    Fail(ext->mark, "extends cycle: " + Join(names, " -> "));
  }
  seen.push_back(parent);
  Node base = LoadTree(parent, ctx, seen, chain, documents);
  seen.pop_back();
  chain.push_back(ext->scalar);
  EraseField(root, "extends");
  // metadata describes one file: a child that has its own does not inherit the parent's description.
  if (root.Find("metadata")) EraseField(base, "metadata");
  DropReplacedReasons(base, root);
  return MergeTrees(base, root);
}

const Node* At(const Node& root, const std::string& a, const std::string& b) {
  const Node* n = root.Find(a);
  if (n && n->kind == Node::Kind::kMap) return n->Find(b);
  return nullptr;
}

// Whole-stack rules that need more than one field or the compat facts.
void CheckStack(const Stack& s, const Node& root) {
  for (auto [name, comp] :
       {std::pair<const char*, const ComponentSpec*>{"cudnn", &s.cudnn}, {"nccl", &s.nccl}}) {
    if (!comp->enabled || !comp->cuda_major || !s.cuda.version.known()) continue;
    if (*comp->cuda_major != static_cast<int>(s.cuda.version.version->major()))
      Fail(At(root, name, "cuda_major")->mark,
           std::string(name) + " is built for CUDA " + std::to_string(*comp->cuda_major) +
               " but the stack's CUDA is " + s.cuda.version.version->str());
  }
  const Compat& compat = EmbeddedHostCompat();
  if (s.cuda.enabled && s.cuda.version.known() && compat.IsCudaPreview(*s.cuda.version.version)) {
    const Version& v = *s.cuda.version.version;
    Fail(At(root, "cuda", "version")->mark, "CUDA " + v.str() + " is the " + compat.CudaReleaseName(v) +
                                                ", not a release; NVIDIA's GA of CUDA " + v.Prefix(2).str() +
                                                " is " + compat.DriverBranchFor(v)->ga->str());
  }
  if (const DriverBranchInfo* b = compat.BranchInfo(s.driver.branch);
      b && !b->end_of_life.empty() && !s.driver.end_of_life.empty() && b->end_of_life != s.driver.end_of_life)
    Fail(At(root, "driver", "end_of_life")->mark,
         "R" + std::to_string(s.driver.branch) + " reaches end of life in " + b->end_of_life +
             " (compat.yaml driver_branches), not " + s.driver.end_of_life);
  if (s.container_toolkit.enabled && s.container_toolkit.version.known()) {
    const Version& v = *s.container_toolkit.version.version;
    for (const auto& adv : compat.toolkit_advisories)
      if (v < adv.fixed_in)
        Fail(At(root, "container_toolkit", "version")->mark, "container toolkit " + v.str() +
                                                                 " is affected by " + Join(adv.cves, ", ") +
                                                                 " (fixed in " + adv.fixed_in.str() + ")");
  }
}

// Every catalogue board the stack claims (architectures less boards_excluded) must run on its pinned driver:
// the flavour and ceiling rules, and the per-release support data (a release that does not list a board does
// not claim it). A boards_excluded entry must name a board of a claimed architecture.
void CheckClaims(const Stack& s, const Node& root) {
  const Compat& compat = EmbeddedCompat();
  const bool open = s.driver.flavour == "open" || s.driver.flavour == "server-open";
  std::optional<int> cuda_major;
  if (s.cuda.enabled && s.cuda.version.known())
    cuda_major = static_cast<int>(s.cuda.version.version->major());
  for (const auto& [key, boards] :
       {std::pair<const char*, const std::vector<ExcludedBoard>*>{"boards_excluded", &s.boards_excluded},
        {"boards_noted", &s.boards_noted}}) {
    const Node* list = root.Find(key);
    if (!list || list->kind != Node::Kind::kList) continue;
    for (size_t i = 0; i < boards->size() && i < list->items.size(); ++i) {
      const ExcludedBoard& b = (*boards)[i];
      const bool any = std::any_of(compat.gpus.begin(), compat.gpus.end(), [&](const GpuModel& g) {
        return b.Matches(g) &&
               std::find(s.architectures.begin(), s.architectures.end(), g.arch) != s.architectures.end();
      });
      if (!any)
        Fail(list->items[i].mark, std::string(key) + ": no board of the stack's architectures is " +
                                      b.pci_id + (b.subsystem.empty() ? "" : " " + b.subsystem));
    }
  }
  if (!s.driver.version.known()) return;
  const Version& v = *s.driver.version.version;
  const Node* arch = root.Find("architectures");
  for (const GpuModel& g : compat.gpus) {
    if (!s.Claims(g)) continue;
    std::string why = g.StackCannotRun(v, open, cuda_major);
    const bool noted = std::any_of(s.boards_noted.begin(), s.boards_noted.end(),
                                   [&](const ExcludedBoard& b) { return b.Matches(g); });
    if (why.empty() && !noted) {
      const BoardSupport sup = g.SupportAt(v);
      if (sup.state == BoardSupport::State::kNotYet)
        why = "driver " + v.str() + " predates " + sup.first->str() + ", the first R" +
              std::to_string(s.driver.branch) + " release that lists it";
      else if (sup.state == BoardSupport::State::kNotInBranch)
        why = "no R" + std::to_string(s.driver.branch) + " release lists it";
    }
    if (why.empty()) continue;
    std::string board = g.pci_ids.front() + (g.subsystems.empty() ? "" : " " + Join(g.subsystems, ", "));
    Fail(arch ? arch->mark : root.mark,
         "stack claims " + g.name + " (" + board + ", " + g.arch + ") but its driver " + v.str() + " (" +
             s.driver.flavour + ") cannot run it: " + why +
             "; narrow architectures, add it to boards_excluded, or to boards_noted with why (README lag)");
  }
}

// `workload.task`: the Task document read beside the document that names it (through ctx.fs, the same
// machine or --root tree as the stack itself); a stack from a URL or an embedded one names no file.
void ReadTask(Stack& s, const Node& root, const LoadContext& ctx) {
  if (!s.workload.task) return;
  const Node* value = At(root, "workload", "task");
  if (!value) return;
  WorkloadTask& t = *s.workload.task;
  auto fail = [&](const std::string& msg) {
    Fail(value->mark, "workload.task " + QuoteToken(t.written) + ": " + msg);
  };
  const std::string doc = value->mark.file ? *value->mark.file : "";
  if (IsUrl(doc)) fail("a stack fetched from a URL cannot name a task file");
  if (StartsWith(doc, kStackDir) && FindEmbedded(doc)) fail("an embedded stack names no task file");
  t.path = Dirname(doc) + t.written;
  if (std::string why = OutsideRoots(t.path, doc, ctx); !why.empty()) fail(why);
  const Source src = ReadFrom(FileAt(t.path), ctx, fail);
  if (src.text.size() > kMaxManifestBytes)
    fail("larger than the " + std::to_string(kMaxManifestBytes >> 20) + " MiB limit for a task");
  t.text = src.text;
}

// `claims`: also CheckClaims (manifest validate and the embedded stacks' test; doctor and apply report a
// board the stack cannot run per host instead).
Stack BuildStack(const Source& src, const LoadContext& ctx, const std::string& source_label,
                 bool claims = false) {
  std::vector<Source> seen{src};
  std::vector<std::string> chain, documents;
  Node merged = LoadTree(src, ctx, seen, chain, documents);
  Stack s = StackFromTree(merged);
  CheckStack(s, merged);
  ReadTask(s, merged, ctx);
  if (claims) CheckClaims(s, merged);
  s.source = source_label;
  s.extends_chain = std::move(chain);
  s.documents = std::move(documents);
  return s;
}

const Stack& CachedEmbedded(const std::string& name, const EmbeddedFile* f) {
  static std::mutex mu;
  static std::map<std::string, Stack> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it == cache.end())
    it = cache.emplace(name, BuildStack(FromEmbedded(f), LoadContext{}, "embedded:" + name)).first;
  return it->second;
}

}  // namespace

std::vector<std::string> EmbeddedStackNames() {
  // The name is the file stem (tests/manifest checks metadata.name == stem), so listing parses nothing.
  std::vector<std::string> names;
  for (const EmbeddedFile* f : ListEmbedded(kStackDir)) {
    std::string path = f->path;
    if (!EndsWith(path, ".yaml")) continue;
    std::string stem = path.substr(sizeof(kStackDir) - 1, path.size() - (sizeof(kStackDir) - 1) - 5);
    if (stem.find('/') == std::string::npos) names.push_back(stem);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Stack LoadStack(const std::string& spec, const LoadContext& ctx) {
  return LoadStack(ParseManifestSource(spec, ctx.fs), ctx);
}

Stack LoadStack(const ManifestSource& from, const LoadContext& ctx) {
  if (from.embedded()) return CachedEmbedded(from.value, EmbeddedStack(from.value));
  Source src = ReadFrom(from, ctx, [&](const std::string& msg) -> void { throw UsageError(msg); });
  return BuildStack(src, ctx, from.written);
}

Stack ParseStack(const std::string& text, const std::string& display_path, const LoadContext& ctx,
                 bool check_claims) {
  Source src;
  src.display = display_path;
  src.url = IsUrl(display_path);
  src.id = src.url ? display_path : AbsolutePath(display_path);
  src.text = text;
  src.embedded = StartsWith(display_path, kStackDir) && FindEmbedded(display_path) != nullptr;
  return BuildStack(src, ctx, display_path, check_claims);
}

std::string ValidateDocument(const std::string& text, const std::string& display_path,
                             const LoadContext& ctx) {
  Node root = ParseTree(text, display_path);
  Fields doc(root, "", nullptr);
  std::string kind = CheckHeader(doc, {"Stack", "Compat", "Profile", "Task", "Prices", "Offer"});
  if (kind == "Compat") ParseCompat(text, display_path);
  if (kind == "Stack") ParseStack(text, display_path, ctx, true);
  if (kind == "Prices") ParsePricesDoc(text, display_path);
  // Profile documents belong to src/launch (launch::ParseProfile), Task documents to src/size
  // (manifest/settings_doc.h reads them), Offer documents to src/accept (through settings_doc.h too); the
  // CLI validates them there, and the GPU names of a Prices document against the catalogue (src/prices/).
  return kind;
}

namespace {
// What RanksAbove compares: long-term support, then CUDA, then the driver, then the boards claimed.
using Rank = std::tuple<bool, Version, Version, size_t>;

Rank RankOf(const Stack& x) {
  return {EmbeddedHostCompat().IsLongTermSupport(x.driver.branch),
          x.cuda.version.known() ? *x.cuda.version.version : Version(),
          x.driver.version.known() ? *x.driver.version.version : Version(), x.architectures.size()};
}
}  // namespace

bool RanksAbove(const Stack& a, const Stack& b) { return RankOf(a) > RankOf(b); }

bool Succeeds(const Stack& a, const Stack& b) {
  return !RanksAbove(b, a) && !RanksAbove(a, b) &&
         std::find(a.extends_chain.begin(), a.extends_chain.end(), b.name) != a.extends_chain.end();
}

bool SupportsHost(const Stack& s, const HostQuery& host) {
  if (!s.SupportsOs(host.os_id, host.os_version_id)) return false;
  for (const auto& a : host.architectures)
    if (!a.empty() && std::find(s.architectures.begin(), s.architectures.end(), a) == s.architectures.end())
      return false;
  const bool open = s.driver.flavour == "open" || s.driver.flavour == "server-open";
  std::optional<int> cuda_major;
  if (s.cuda.enabled && s.cuda.version.known())
    cuda_major = static_cast<int>(s.cuda.version.version->major());
  return std::all_of(host.boards.begin(), host.boards.end(), [&](const GpuModel* g) {
    return s.Claims(*g) &&
           (!s.driver.version.known() ||
            g->StackCannotRun(*s.driver.version.version, open, cuda_major).empty()) &&
           LibraryCannotRun(EmbeddedHostCompat(), s, *g).empty();
  });
}

namespace {

const prebuilt::RawNode* RawField(const prebuilt::RawNode& map, std::string_view key) {
  for (unsigned i = 0; i < map.count; ++i) {
    const prebuilt::RawNode& f = prebuilt::kNodes[map.first + i];
    if (prebuilt::KeyOf(f) == key) return &f;
  }
  return nullptr;
}

bool RawScalar(const prebuilt::RawNode* n, std::string_view value) {
  return n && n->kind == static_cast<unsigned char>(Node::Kind::kScalar) && prebuilt::ScalarOf(*n) == value;
}

bool RawListHas(const prebuilt::RawNode& list, std::string_view value) {
  for (unsigned i = 0; i < list.count; ++i)
    if (RawScalar(&prebuilt::kNodes[list.first + i], value)) return true;
  return false;
}

bool RawOsHas(const prebuilt::RawNode& list, const std::string& id, const std::string& version_id) {
  for (unsigned i = 0; i < list.count; ++i) {
    const prebuilt::RawNode& t = prebuilt::kNodes[list.first + i];
    if (t.kind == static_cast<unsigned char>(Node::Kind::kMap) && RawScalar(RawField(t, "id"), id) &&
        RawScalar(RawField(t, "version_id"), version_id))
      return true;
  }
  return false;
}

// What the default choice reads of an embedded stack from the build-time tables alone, along its extends
// chain, the child's value first (maps merge key by key; a scalar or a list is replaced whole): one walk
// serves both MayChoose and RawRank. `complete` is false where the chain cannot be followed (a missing
// file, a root that is not a map, an extends that is not a name).
struct RawStackFields {
  bool complete = true;
  const prebuilt::RawNode *legacy = nullptr, *os = nullptr, *archs = nullptr;
  const prebuilt::RawNode *branch = nullptr, *driver_version = nullptr, *cuda_version = nullptr;
};

RawStackFields ReadRawStack(const std::string& name) {
  RawStackFields f;
  std::string at = name;
  for (int depth = 0; depth < kMaxExtendsDepth; ++depth) {
    const prebuilt::RawNode* root = PrebuiltRoot(std::string(kStackDir) + at + ".yaml");
    if (!root || root->kind != static_cast<unsigned char>(Node::Kind::kMap)) {
      f.complete = false;
      break;
    }
    if (!f.legacy) f.legacy = RawField(*root, "legacy");
    if (!f.os) f.os = RawField(*root, "os");
    if (!f.archs) f.archs = RawField(*root, "architectures");
    if (const prebuilt::RawNode* d = RawField(*root, "driver")) {
      if (!f.branch) f.branch = RawField(*d, "branch");
      if (!f.driver_version) f.driver_version = RawField(*d, "version");
    }
    if (const prebuilt::RawNode* c = RawField(*root, "cuda"); c && !f.cuda_version)
      f.cuda_version = RawField(*c, "version");
    const prebuilt::RawNode* ext = RawField(*root, "extends");
    if (!ext) break;
    if (ext->kind != static_cast<unsigned char>(Node::Kind::kScalar)) {
      f.complete = false;
      break;
    }
    at.assign(prebuilt::ScalarOf(*ext));
  }
  return f;
}

// Whether the default choice must build the stack to judge it for `host`: false only when its `legacy`,
// `os` and `architectures` alone rule it out; anything else is decided on the built stack (SupportsHost),
// so this only spares building stacks that could never be chosen.
bool MayChoose(const RawStackFields& f, const HostQuery& host) {
  if (!f.complete) return true;
  const auto list = static_cast<unsigned char>(Node::Kind::kList);
  if (RawScalar(f.legacy, "true")) return false;
  if (f.os && f.os->kind == list && !RawOsHas(*f.os, host.os_id, host.os_version_id)) return false;
  if (f.archs && f.archs->kind == list)
    for (const auto& a : host.architectures)
      if (!a.empty() && !RawListHas(*f.archs, a)) return false;
  return true;
}

// The stack's Rank from `driver.branch`, `driver.version`, `cuda.version` and `architectures`; nullopt
// where a value is not of the shape the built stack would read.
std::optional<Rank> RawRank(const RawStackFields& f) {
  const auto scalar = static_cast<unsigned char>(Node::Kind::kScalar);
  auto version = [&](const prebuilt::RawNode* n) -> std::optional<Version> {
    if (!n) return Version();
    if (n->kind != scalar) return std::nullopt;
    const std::string_view text = prebuilt::ScalarOf(*n);
    if (text == "unknown") return Version();
    return Version::Parse(text);
  };
  if (!f.complete || !f.branch || f.branch->kind != scalar || !f.archs ||
      f.archs->kind != static_cast<unsigned char>(Node::Kind::kList))
    return std::nullopt;
  auto b = ParseUnsigned(prebuilt::ScalarOf(*f.branch));
  auto cuda = version(f.cuda_version);
  auto driver = version(f.driver_version);
  if (!b || *b > 100000 || !cuda || !driver) return std::nullopt;
  return Rank{EmbeddedHostCompat().IsLongTermSupport(static_cast<int>(*b)), *cuda, *driver, f.archs->count};
}

// The choice among `names`, visited in order: the first supported stack of the highest rank, replaced by a
// level one that succeeds it. With `ranks` (the names sorted by them, highest first, ties in name order)
// the visit stops at the first stack ranking below the best, so only the stacks that could win are built;
// a built stack whose rank is not the one given ends it with nullopt (the caller visits them all instead).
std::optional<const Stack*> BestOf(const std::vector<std::string>& names, const std::vector<Rank>* ranks,
                                   const HostQuery& host) {
  const Stack* best = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (ranks && best && (*ranks)[i] < RankOf(*best)) break;
    const Stack& s = CachedEmbedded(names[i], EmbeddedStack(names[i]));
    if (ranks && RankOf(s) != (*ranks)[i]) return std::nullopt;
    if (s.legacy || !SupportsHost(s, host)) continue;
    if (!best || RanksAbove(s, *best) || Succeeds(s, *best)) best = &s;
  }
  return best;
}

// The default choice, building only the stacks that could be chosen: those the build-time tables do not
// rule out (MayChoose), in rank order (RawRank) down to the best's rank. Where a rank cannot be read from
// the tables, every candidate is built and visited in name order, as the choice is defined.
const Stack* ChooseRanked(const HostQuery& host) {
  std::vector<std::string> names;
  std::vector<std::pair<Rank, std::string>> ranked;
  bool raw = true;
  for (const std::string& name : EmbeddedStackNames()) {
    const RawStackFields fields = ReadRawStack(name);
    if (!MayChoose(fields, host)) continue;
    names.push_back(name);
    auto r = raw ? RawRank(fields) : std::nullopt;
    raw = raw && r;
    if (r) ranked.emplace_back(*r, name);
  }
  if (raw) {
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> order;
    std::vector<Rank> ranks;
    for (auto& [rank, name] : ranked) {
      order.push_back(name);
      ranks.push_back(rank);
    }
    if (auto best = BestOf(order, &ranks, host)) return *best;
  }
  return *BestOf(names, nullptr, host);
}

}  // namespace

DefaultChoice ChooseDefaultStack(const HostQuery& host) {
  std::vector<std::string> archs;
  for (const auto& a : host.architectures)
    if (!a.empty() && std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(a);
  const Stack* best = ChooseRanked(host);
  std::string where =
      host.os_id.empty() ? "an unknown OS (no /etc/os-release)" : host.os_id + " " + host.os_version_id;
  std::string gpus = archs.empty() ? "no known GPU" : Join(archs, ", ") + " GPUs";
  if (!best)
    throw UsageError("no embedded stack supports " + where + " with " + gpus +
                     " (embedded: " + Join(EmbeddedStackNames(), ", ") + "); choose one with --manifest");
  const Compat& compat = EmbeddedHostCompat();
  const bool lts = compat.IsLongTermSupport(best->driver.branch);
  std::string cuda = best->cuda.version.known() ? best->cuda.version.version->str() : "unknown";
  std::string driver = best->driver.version.known() ? best->driver.version.version->str() : "unknown";
  return {best->name, std::string(lts ? "the newest long-term-support stack"
                                      : "the newest stack (no long-term-support one does)") +
                          " (driver " + driver + ", R" + std::to_string(best->driver.branch) +
                          (lts ? " LTS" : "") + ", CUDA " + cuda + ") that supports " + where + " and " +
                          gpus};
}

}  // namespace gp::manifest
