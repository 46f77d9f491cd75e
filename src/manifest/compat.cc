// manifests/compat.yaml -> Compat, and the Compat look-ups (model.h).
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "manifest/fields.h"
#include "manifest/library_builds.h"
#include "manifest/loader.h"
#include "manifest/prebuilt.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

std::string PciId(const Node& n) {
  std::string id = ToLower(AsString(n));
  bool ok = id.size() == 6 && StartsWith(id, "0x") &&
            id.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
  if (!ok) Fail(n.mark, QuoteToken(n.scalar) + " is not a PCI device id (like \"0x2330\")");
  return id;
}

// "10de:16c0": PCI subsystem vendor and device, lower-case hex.
std::string Subsystem(const Node& n) {
  std::string id = ToLower(AsString(n));
  bool ok = id.size() == 9 && id[4] == ':' &&
            id.find_first_not_of("0123456789abcdef:") == std::string::npos && id.find(':') == 4 &&
            id.rfind(':') == 4;
  if (!ok) Fail(n.mark, QuoteToken(n.scalar) + " is not a PCI subsystem (like \"10de:16c0\")");
  return id;
}

int Branch(const Node& n) {
  long long b = AsInt(n);
  if (b < 1 || b > 100000) Fail(n.mark, QuoteToken(n.scalar) + " is not a driver branch (like 535)");
  return static_cast<int>(b);
}

// `support: {"535": "535.129.03", "545": none}`: branch -> first official release that lists the board, or
// none.
std::map<int, std::optional<Version>> ParseSupport(const Node& n) {
  if (n.kind != Node::Kind::kMap) Fail(n.mark, "support must be a map of driver branches");
  std::map<int, std::optional<Version>> out;
  for (size_t i = 0; i < n.fields.size(); ++i) {
    const auto& [key, value] = n.fields[i];
    const bool digits =
        !key.empty() && key.size() <= 5 && key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || key[0] == '0')
      Fail(n.key_marks[i], QuoteToken(key) + " is not a driver branch (like \"535\")");
    const int branch = std::stoi(key);
    if (value.kind == Node::Kind::kScalar && value.scalar == "none") {
      out[branch] = std::nullopt;
      continue;
    }
    Version v = AsVersion(value);
    if (static_cast<int>(v.major()) != branch)
      Fail(value.mark, "release " + v.str() + " is not on branch " + key);
    out[branch] = v;
  }
  return out;
}

std::string OneOf(Fields& f, const char* key, const std::vector<std::string>& allowed) {
  const Node& n = f.Require(key);
  std::string v = AsString(n);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
    Fail(n.mark, std::string(key) + " " + QuoteToken(v) + " is not one of " + Join(allowed, ", "));
  return v;
}

// The board fields (tools/data/gpu-boards.tsv): all of them or none.
void ParseBoard(Fields& f, GpuModel& g) {
  const Node* board = f.Get("board");
  if (!board) {
    for (const char* k : {"memory_mib", "memory", "form", "servers", "nvlink", "p2p", "memory_source",
                          "link_source", "nvlink_links", "nvlink_links_source"})
      if (f.node().Find(k)) Fail(f.node().KeyMark(k), std::string(k) + " needs board");
    return;
  }
  g.board = AsLine(*board);
  const Node& mib = f.Require("memory_mib");
  const long long m = AsInt(mib);
  if (m < 1 || m > (1LL << 30)) Fail(mib.mark, "memory_mib must be between 1 and 2^30 MiB");
  g.memory_mib = static_cast<uint64_t>(m);
  g.memory_kind = OneOf(f, "memory", {"nvidia-smi", "rounded", "marketed", "system"});
  g.form = OneOf(f, "form", {"sxm", "pcie", "superchip", "desktop", "unknown"});
  for (const Node& n : AsList(f.Require("servers"))) {
    const long long s = AsInt(n);
    if (s < 1 || s > 64 || (!g.server_sizes.empty() && s <= g.server_sizes.back()))
      Fail(n.mark, "servers must be ascending GPU counts between 1 and 64");
    g.server_sizes.push_back(static_cast<int>(s));
  }
  if (g.server_sizes.empty()) Fail(f.node().KeyMark("servers"), "servers must name at least one GPU count");
  const Node& nv = f.Require("nvlink");
  const long long d = AsInt(nv);
  if (d < 0 || d > 4096) Fail(nv.mark, "nvlink must be a GPU count between 0 and 4096");
  g.nvlink_domain = static_cast<int>(d);
  g.p2p = OneOf(f, "p2p", {"yes", "no", "unknown"});
  g.memory_source = AsLine(f.Require("memory_source"));
  g.link_source = AsLine(f.Require("link_source"));
  // NVLink links per GPU, with their source: both or neither.
  if (const Node* links = f.Get("nvlink_links")) {
    const long long n = AsInt(*links);
    if (n < 1 || n > 99) Fail(links->mark, "nvlink_links must be a link count between 1 and 99");
    g.nvlink_links = static_cast<int>(n);
    g.nvlink_links_source = AsLine(f.Require("nvlink_links_source"));
  } else if (f.node().Find("nvlink_links_source")) {
    Fail(f.node().KeyMark("nvlink_links_source"), "nvlink_links_source needs nvlink_links");
  }
}

void ParseGpus(const Node& list, Compat& out) {
  for (const Node& item : AsList(list)) {
    Fields f(item, "gpus", nullptr);
    f.Only({"name",
            "pci_ids",
            "subsystems",
            "arch",
            "cc",
            "datacenter",
            "min_cuda",
            "min_driver_branch",
            "support",
            "board",
            "memory_mib",
            "memory",
            "form",
            "servers",
            "nvlink",
            "p2p",
            "memory_source",
            "link_source",
            "nvlink_links",
            "nvlink_links_source"});
    GpuModel g;
    g.name = AsString(f.Require("name"));
    for (const Node& id : AsList(f.Require("pci_ids"))) g.pci_ids.push_back(PciId(id));
    if (const Node* n = f.Get("subsystems"))
      for (const Node& s : AsList(*n)) g.subsystems.push_back(Subsystem(s));
    g.arch = AsString(f.Require("arch"));
    g.cc = AsVersion(f.Require("cc"));
    g.datacenter = AsBool(f.Require("datacenter"));
    g.min_cuda = AsVersion(f.Require("min_cuda"));
    if (const Node* n = f.Get("min_driver_branch")) g.min_driver_branch = Branch(*n);
    if (const Node* n = f.Get("support")) g.support = ParseSupport(*n);
    ParseBoard(f, g);
    out.gpus.push_back(std::move(g));
  }
}

const std::vector<std::string> kRuleArchs = {"maxwell", "pascal", "volta",  "turing",
                                             "ampere",  "ada",    "hopper", "blackwell"};

void ParseRules(const Node& list, Compat& out) {
  for (const Node& item : AsList(list)) {
    Fields f(item, "driver_rules", nullptr);
    f.Only({"arch", "board", "modules", "last_branch", "last_cuda_major"});
    DriverRule r;
    r.arch = f.String("arch").value_or("");
    if (const Node* b = f.Get("board")) r.board = PciId(*b);
    if (r.arch.empty() == r.board.empty()) Fail(item.mark, "a driver rule names either arch or board");
    if (!r.arch.empty() && std::find(kRuleArchs.begin(), kRuleArchs.end(), r.arch) == kRuleArchs.end())
      Fail(f.node().Find("arch")->mark,
           "unknown architecture " + QuoteToken(r.arch) + Suggestion(r.arch, kRuleArchs, "expected one of"));
    r.modules = f.String("modules").value_or("");
    if (!r.modules.empty() && r.modules != "open" && r.modules != "proprietary")
      Fail(f.node().Find("modules")->mark,
           "modules must be open or proprietary, got " + QuoteToken(r.modules));
    if (const Node* n = f.Get("last_branch")) r.last_branch = Branch(*n);
    if (auto v = f.Int("last_cuda_major")) r.last_cuda_major = static_cast<int>(*v);
    out.driver_rules.push_back(std::move(r));
  }
}

// The rules of a board's architecture, then those naming its device id.
void ApplyRules(const std::vector<DriverRule>& rules, GpuModel& g) {
  for (int pass = 0; pass < 2; ++pass) {
    for (const DriverRule& r : rules) {
      const bool hit = pass == 0 ? r.arch == g.arch
                                 : !r.board.empty() && std::find(g.pci_ids.begin(), g.pci_ids.end(),
                                                                 r.board) != g.pci_ids.end();
      if (!hit) continue;
      if (r.modules == "open") g.requires_open = true;
      if (r.modules == "proprietary") g.open_modules = false;
      if (r.last_branch) g.last_driver_branch = r.last_branch;
      if (r.last_cuda_major) g.max_cuda_major = r.last_cuda_major;
    }
  }
}

void ApplyRules(Compat& c) {
  for (GpuModel& g : c.gpus) ApplyRules(c.driver_rules, g);
}

Pinned ImagePin(Fields& f, const std::string& key, const std::string& ref) {
  Pinned p;
  if (auto v = f.VersionOf(key)) {
    p.version = *v;
  } else {
    p.unknown = true;
    p.reason = key + " of " + ref + " is not in NVIDIA's notes available to gpuprep";
  }
  return p;
}

void ParseImages(const Node& list, Compat& out) {
  for (const Node& item : AsList(list)) {
    Fields f(item, "images", nullptr);
    f.Only({"ref", "cuda", "cudnn", "nccl", "driver_min_branch", "forward_compat", "source"});
    ImageFacts img;
    img.ref = AsString(f.Require("ref"));
    img.cuda = ImagePin(f, "cuda", img.ref);
    img.cudnn = ImagePin(f, "cudnn", img.ref);
    img.nccl = ImagePin(f, "nccl", img.ref);
    if (const Node* n = f.Get("driver_min_branch")) img.driver_min_branch = Branch(*n);
    if (const Node* n = f.Get("forward_compat"))
      for (const Node& v : AsList(*n)) img.forward_compat.push_back(AsVersion(v));
    img.source = AsString(f.Require("source"));
    out.images.push_back(std::move(img));
  }
}

// `cuda_driver_branches: [{cuda: "13.4", branch: 615, ga: "13.4.1"}]`, newest first after parsing.
void ParseCudaBranches(const Node& list, Compat& out) {
  for (const Node& item : AsList(list)) {
    Fields f(item, "cuda_driver_branches", nullptr);
    f.Only({"cuda", "branch", "ga"});
    CudaBranchRow row;
    const Node& cuda = f.Require("cuda");
    row.cuda = AsVersion(cuda);
    if (row.cuda.size() != 2)
      Fail(cuda.mark, "cuda is a CUDA minor (like \"13.4\"), got " + QuoteToken(cuda.scalar));
    row.branch = Branch(f.Require("branch"));
    if (const Node* ga = f.Get("ga")) {
      row.ga = AsVersion(*ga);
      if (row.ga->size() != 3 || row.ga->Prefix(2) != row.cuda)
        Fail(ga->mark, "ga is a release of CUDA " + row.cuda.str() + " (like \"" + row.cuda.str() +
                           ".1\"), got " + QuoteToken(ga->scalar));
    }
    for (const auto& r : out.cuda_driver_branches)
      if (r.cuda == row.cuda) Fail(item.mark, "CUDA " + row.cuda.str() + " is listed twice");
    out.cuda_driver_branches.push_back(std::move(row));
  }
  std::stable_sort(out.cuda_driver_branches.begin(), out.cuda_driver_branches.end(),
                   [](const CudaBranchRow& a, const CudaBranchRow& b) { return a.cuda > b.cuda; });
}

// `driver_branches: [{branch: 580, designation: long-term-support, end_of_life: "2028-06"}]`.
void ParseDriverBranches(const Node& list, Compat& out) {
  static const std::vector<std::string> kDesignations = {"long-term-support", "production", "new-feature"};
  for (const Node& item : AsList(list)) {
    Fields f(item, "driver_branches", nullptr);
    f.Only({"branch", "designation", "end_of_life"});
    DriverBranchInfo b;
    b.branch = Branch(f.Require("branch"));
    const Node& d = f.Require("designation");
    b.designation = AsString(d);
    if (std::find(kDesignations.begin(), kDesignations.end(), b.designation) == kDesignations.end())
      Fail(d.mark, "unknown designation " + QuoteToken(b.designation) +
                       Suggestion(b.designation, kDesignations, "expected one of"));
    if (const Node* e = f.Get("end_of_life")) {
      b.end_of_life = AsString(*e);
      const bool month = b.end_of_life.size() == 7 && b.end_of_life[4] == '-' &&
                         b.end_of_life.find_first_not_of("0123456789-") == std::string::npos;
      if (!month)
        Fail(e->mark, "end_of_life is a month (like \"2028-06\"), got " + QuoteToken(b.end_of_life));
    }
    for (const auto& x : out.driver_branches)
      if (x.branch == b.branch) Fail(item.mark, "branch " + std::to_string(b.branch) + " is listed twice");
    out.driver_branches.push_back(std::move(b));
  }
}

}  // namespace

namespace {

Compat CompatFromTree(const Node& root) {
  Fields doc(root, "", nullptr);
  doc.Only({"apiVersion", "kind", "metadata", "cuda_min_driver", "cuda_driver_branches", "driver_branches",
            "minor_compat", "driver_rules", "library_builds", "gpus", "nvswitch_pci_ids",
            "toolkit_advisories", "images"});
  CheckHeader(doc, {"Compat"});
  if (const Node* meta = doc.Get("metadata")) Fields(*meta, "metadata", nullptr).Only({"name"});
  Compat out;
  for (const Node& item : AsList(doc.Require("cuda_min_driver"))) {
    Fields f(item, "cuda_min_driver", nullptr);
    f.Only({"cuda", "driver", "secondary"});
    CudaDriverRow row;
    row.cuda = AsVersion(f.Require("cuda"));
    row.min_driver = AsVersion(f.Require("driver"));
    row.secondary = f.Bool("secondary").value_or(false);
    out.cuda_min_driver.push_back(std::move(row));
  }
  std::stable_sort(out.cuda_min_driver.begin(), out.cuda_min_driver.end(),
                   [](const CudaDriverRow& a, const CudaDriverRow& b) { return a.cuda > b.cuda; });
  if (const Node* n = doc.Get("cuda_driver_branches")) ParseCudaBranches(*n, out);
  if (const Node* n = doc.Get("driver_branches")) ParseDriverBranches(*n, out);
  for (const Node& item : AsList(doc.Require("minor_compat"))) {
    Fields f(item, "minor_compat", nullptr);
    f.Only({"cuda_major", "min_branch", "exact_min"});
    MinorCompat mc;
    mc.cuda_major = static_cast<int>(AsInt(f.Require("cuda_major")));
    mc.min_branch = Branch(f.Require("min_branch"));
    mc.exact_min = f.VersionOf("exact_min");
    out.minor_compat.push_back(std::move(mc));
  }
  if (const Node* n = doc.Get("driver_rules")) ParseRules(*n, out);
  ParseGpus(doc.Require("gpus"), out);
  ApplyRules(out);
  if (const Node* n = doc.Get("nvswitch_pci_ids"))
    for (const Node& id : AsList(*n)) out.nvswitch_pci_ids.push_back(PciId(id));
  if (const Node* n = doc.Get("toolkit_advisories")) {
    for (const Node& item : AsList(*n)) {
      Fields f(item, "toolkit_advisories", nullptr);
      f.Only({"cves", "fixed_in"});
      ToolkitAdvisory adv;
      adv.cves = AsStringList(f.Require("cves"));
      adv.fixed_in = AsVersion(f.Require("fixed_in"));
      out.toolkit_advisories.push_back(std::move(adv));
    }
  }
  if (const Node* n = doc.Get("images")) ParseImages(*n, out);
  if (const Node* n = doc.Get("library_builds")) ParseLibraryBuilds(*n, out);
  return out;
}

}  // namespace

Compat ParseCompat(const std::string& text, const std::string& display_path) {
  return CompatFromTree(ParseTree(text, display_path));
}

namespace {

// Whether the raw catalogue row `item` (a map) lists device id `id` (lower case) in its pci_ids.
bool RowLists(const prebuilt::RawNode& item, const std::string& id) {
  if (item.kind != static_cast<unsigned char>(Node::Kind::kMap)) return false;
  for (unsigned i = 0; i < item.count; ++i) {
    const prebuilt::RawNode& field = prebuilt::kNodes[item.first + i];
    if (prebuilt::KeyOf(field) != "pci_ids") continue;
    for (unsigned j = 0; j < field.count; ++j) {
      const prebuilt::RawNode& v = prebuilt::kNodes[field.first + j];
      if (v.kind == static_cast<unsigned char>(Node::Kind::kScalar) &&
          ToLower(std::string(prebuilt::ScalarOf(v))) == id)
        return true;
    }
  }
  return false;
}

// The embedded catalogue's rows, each decoded (parsed and its driver rules applied) when a device id it lists
// is first asked for; the same checks as the whole catalogue's (ParseGpus), so a row decodes the same way.
class PrebuiltGpuRows : public GpuRowSource {
 public:
  PrebuiltGpuRows(const prebuilt::RawNode& list, std::shared_ptr<const std::string> file,
                  std::vector<DriverRule> rules)
      : list_(list), file_(std::move(file)), rules_(std::move(rules)) {}

  std::vector<const GpuModel*> RowsOf(const std::string& device_id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = by_id_.try_emplace(device_id);
    if (!added) return it->second;
    for (unsigned i = 0; i < list_.count; ++i) {
      const prebuilt::RawNode& item = prebuilt::kNodes[list_.first + i];
      if (!RowLists(item, device_id)) continue;
      auto [row, decoded] = rows_.try_emplace(i);
      if (decoded) {
        Node one;
        one.kind = Node::Kind::kList;
        one.items.push_back(PrebuiltNode(item, file_));
        Compat c;
        ParseGpus(one, c);
        ApplyRules(rules_, c.gpus.front());
        row->second = std::make_unique<GpuModel>(std::move(c.gpus.front()));
      }
      it->second.push_back(row->second.get());
    }
    return it->second;
  }

 private:
  const prebuilt::RawNode& list_;
  std::shared_ptr<const std::string> file_;
  std::vector<DriverRule> rules_;
  mutable std::mutex mu_;
  mutable std::map<unsigned, std::unique_ptr<GpuModel>> rows_;  // by position in the list
  mutable std::map<std::string, std::vector<const GpuModel*>> by_id_;
};

}  // namespace

const Compat& EmbeddedHostCompat() {
  static const Compat compat = [] {
    const prebuilt::RawNode* root = PrebuiltRoot("manifests/compat.yaml");
    if (!root) throw Error(kExitFailed, "manifests/compat.yaml is not embedded in this build");
    auto file = std::make_shared<const std::string>("manifests/compat.yaml");
    // The document without its catalogue rows: `gpus` rebuilt as an empty list, the rows kept raw.
    Node tree;
    tree.kind = Node::Kind::kMap;
    tree.mark = {file, root->line, root->col};
    const prebuilt::RawNode* gpus = nullptr;
    for (unsigned i = 0; i < root->count; ++i) {
      const prebuilt::RawNode& field = prebuilt::kNodes[root->first + i];
      std::string key(prebuilt::KeyOf(field));
      Node value;
      if (key == "gpus") {
        gpus = &field;
        value.kind = Node::Kind::kList;
        value.mark = {file, field.line, field.col};
      } else {
        value = PrebuiltNode(field, file);
      }
      tree.fields.emplace_back(std::move(key), std::move(value));
      tree.key_marks.push_back({file, field.key_line, field.key_col});
    }
    if (!gpus || gpus->kind != static_cast<unsigned char>(Node::Kind::kList))
      throw Error(kExitFailed, "manifests/compat.yaml has no gpus list");
    Compat out = CompatFromTree(tree);
    out.gpu_rows = std::make_shared<PrebuiltGpuRows>(*gpus, file, out.driver_rules);
    return out;
  }();
  return compat;
}

const Compat& EmbeddedCompat() {
  static const Compat compat = [] {
    // Parsed at build time (prebuilt.h): no YAML work at run time.
    std::optional<Node> tree = PrebuiltTree("manifests/compat.yaml");
    if (!tree) throw Error(kExitFailed, "manifests/compat.yaml is not embedded in this build");
    return CompatFromTree(*tree);
  }();
  return compat;
}

std::optional<Version> Compat::MinDriverFor(const Version& cuda) const {
  // Exact release first ("12.2" is 12.2.0 = GA); else the newest row of the same major.minor not above it
  // (12.2.3 -> 12.2 Update 2). A major.minor with no row at all has no answer.
  const CudaDriverRow* best = nullptr;
  for (const auto& row : cuda_min_driver) {
    if (row.cuda == cuda) return row.min_driver;
    if (row.cuda.major() == cuda.major() && row.cuda.minor() == cuda.minor() && row.cuda <= cuda &&
        (!best || row.cuda > best->cuda))
      best = &row;
  }
  if (best) return best->min_driver;
  return std::nullopt;
}

const CudaBranchRow* Compat::DriverBranchFor(const Version& cuda) const {
  for (const auto& row : cuda_driver_branches)
    if (row.cuda.major() == cuda.major() && row.cuda.minor() == cuda.minor()) return &row;
  return nullptr;
}

bool Compat::IsCudaPreview(const Version& cuda) const {
  const CudaBranchRow* row = DriverBranchFor(cuda);
  return row && row->ga && cuda.size() >= 3 && cuda.Prefix(3) < *row->ga;
}

std::string Compat::CudaReleaseName(const Version& cuda) const {
  const std::string minor = cuda.Prefix(2).str();
  const CudaBranchRow* row = DriverBranchFor(cuda);
  if (row && row->ga) {
    if (cuda.Prefix(3) < *row->ga) return minor + " developer preview";
    const uint64_t update = cuda.patch() - row->ga->patch();
    return update == 0 ? minor + " GA" : minor + " Update " + std::to_string(update);
  }
  return cuda.patch() == 0 ? minor + " GA" : minor + " Update " + std::to_string(cuda.patch());
}

const DriverBranchInfo* Compat::BranchInfo(int branch) const {
  for (const auto& b : driver_branches)
    if (b.branch == branch) return &b;
  return nullptr;
}

bool Compat::IsLongTermSupport(int branch) const {
  const DriverBranchInfo* b = BranchInfo(branch);
  return b && b->designation == "long-term-support";
}

const MinorCompat* Compat::MinorCompatFor(int cuda_major) const {
  for (const auto& mc : minor_compat)
    if (mc.cuda_major == cuda_major) return &mc;
  return nullptr;
}

namespace {

std::string Hex4(const std::string& id) {  // "0x10DE" / "10de" -> "10de"
  std::string s = ToLower(id);
  return StartsWith(s, "0x") ? s.substr(2) : s;
}

}  // namespace

const GpuModel* Compat::GpuByPci(const std::string& device_id, const std::string& subsystem_vendor_id,
                                 const std::string& subsystem_device_id) const {
  const std::string id = "0x" + Hex4(device_id);
  const std::string sub = subsystem_vendor_id.empty() || subsystem_device_id.empty()
                              ? std::string()
                              : Hex4(subsystem_vendor_id) + ":" + Hex4(subsystem_device_id);
  std::vector<const GpuModel*> rows;
  if (gpu_rows) {
    rows = gpu_rows->RowsOf(id);
  } else {
    for (const auto& g : gpus)
      if (std::find(g.pci_ids.begin(), g.pci_ids.end(), id) != g.pci_ids.end()) rows.push_back(&g);
  }
  const GpuModel* any_board = nullptr;
  for (const GpuModel* g : rows) {
    if (g->subsystems.empty()) {
      if (!any_board) any_board = g;
    } else if (!sub.empty() &&
               std::find(g->subsystems.begin(), g->subsystems.end(), sub) != g->subsystems.end()) {
      return g;
    }
  }
  return any_board;
}

const GpuModel* Compat::GpuByPciId(const std::string& device_id) const { return GpuByPci(device_id, "", ""); }

bool Compat::IsNvSwitch(const std::string& device_id) const {
  std::string id = ToLower(device_id);
  if (!StartsWith(id, "0x")) id = "0x" + id;
  return std::find(nvswitch_pci_ids.begin(), nvswitch_pci_ids.end(), id) != nvswitch_pci_ids.end();
}

BoardSupport GpuModel::SupportAt(const Version& driver) const {
  BoardSupport s;
  auto it = support.find(static_cast<int>(driver.major()));
  if (it == support.end()) return s;
  s.first = it->second;
  if (!it->second)
    s.state = BoardSupport::State::kNotInBranch;
  else
    s.state = driver >= *it->second ? BoardSupport::State::kListed : BoardSupport::State::kNotYet;
  return s;
}

std::string GpuModel::SupportingBranches() const {
  std::vector<std::string> parts;
  for (const auto& [branch, first] : support)
    if (first) parts.push_back("R" + std::to_string(branch) + " from " + first->str());
  return Join(parts, ", ");
}

std::optional<Version> GpuModel::FirstListed() const {
  for (const auto& [branch, first] : support)
    if (first) return first;
  return std::nullopt;
}

std::string GpuModel::StackCannotRun(const Version& driver, bool open, std::optional<int> cuda_major) const {
  const int branch = static_cast<int>(driver.major());
  if (requires_open && !open) return name + " runs only on NVIDIA's open kernel modules";
  if (!open_modules && open) return "the open kernel modules do not drive " + name + " (" + arch + ")";
  if (last_driver_branch && branch > *last_driver_branch)
    return "R" + std::to_string(*last_driver_branch) + " is the last driver branch for " + name;
  if (max_cuda_major && cuda_major && *cuda_major > *max_cuda_major)
    return "CUDA " + std::to_string(*max_cuda_major) + ".x is the last CUDA for " + name;
  if (min_driver_branch && branch < min_driver_branch)
    return name + " needs driver branch " + std::to_string(min_driver_branch) + " or later";
  return "";
}

const ImageFacts* Compat::ImageByRef(const std::string& ref) const {
  for (const auto& img : images)
    if (img.ref == ref) return &img;
  return nullptr;
}

}  // namespace gp::manifest
