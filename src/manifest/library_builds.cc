// compat.yaml library_builds -> Compat::library_builds, the rule that says whether a build runs on a compute
// capability, and the pins of a stack checked against the boards it claims (loader.h LibraryCannotRun).
#include "manifest/library_builds.h"

#include <algorithm>

#include "manifest/fields.h"
#include "manifest/loader.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

// A compute capability, "X.Y".
Version ComputeCapability(const Node& n) {
  Version v = AsVersion(n);
  if (v.size() != 2) Fail(n.mark, "\"" + n.scalar + "\" is not a compute capability (like \"8.0\")");
  return v;
}

std::vector<Version> ComputeCapabilities(Fields& f, const char* key) {
  std::vector<Version> out;
  if (const Node* n = f.Get(key))
    for (const Node& cc : AsList(*n)) out.push_back(ComputeCapability(cc));
  return out;
}

std::string Strs(const std::vector<Version>& vs) {
  std::vector<std::string> parts;
  parts.reserve(vs.size());
  for (const Version& v : vs) parts.push_back(v.str());
  return Join(parts, ", ");
}

// The CUDA a stack's library pin is built for, at the row's granularity: NCCL the stack's CUDA minor (its
// packages name it: 2.30.7-1+cuda12.9), cuDNN the CUDA major (libcudnn9-cuda-12).
std::optional<Version> BuiltFor(const Stack& s, const ComponentSpec& lib, bool minor) {
  if (!s.cuda.version.known()) return std::nullopt;
  const Version& cuda = *s.cuda.version.version;
  if (lib.cuda_major && static_cast<uint64_t>(*lib.cuda_major) != cuda.major())
    return minor ? std::nullopt : std::optional<Version>(Version::Must(std::to_string(*lib.cuda_major)));
  return cuda.Prefix(minor ? 2 : 1);
}

std::string LibraryWhy(const Compat& c, const Stack& s, const GpuModel& g, const char* library,
                       const char* label, const ComponentSpec& lib, bool minor) {
  if (!lib.enabled || !lib.version.known()) return "";
  const std::optional<Version> cuda = BuiltFor(s, lib, minor);
  if (!cuda) return "";
  const LibraryBuild* b = c.LibraryBuildFor(library, *lib.version.version, *cuda);
  if (!b || b->Runs(g.cc)) return "";
  return std::string(label) + " " + lib.version.version->str() + " (its CUDA " + cuda->str() +
         " build) has no code for compute capability " + g.cc.str() + " (" + b->Carries() + ": " + b->source +
         ")";
}

}  // namespace

void ParseLibraryBuilds(const Node& list, Compat& out) {
  for (const Node& item : AsList(list)) {
    Fields f(item, "library_builds", nullptr);
    f.Only({"library", "version", "cuda", "sass", "ptx", "min_cc", "source"});
    LibraryBuild b;
    const Node& lib = f.Require("library");
    b.library = AsString(lib);
    if (b.library != "nccl" && b.library != "cudnn")
      Fail(lib.mark, "library must be nccl or cudnn, got \"" + b.library + "\"");
    b.version = AsVersion(f.Require("version"));
    const Node& cuda = f.Require("cuda");
    b.cuda = AsVersion(cuda);
    const size_t parts = b.library == "nccl" ? 2 : 1;
    if (b.cuda.size() != parts)
      Fail(cuda.mark, std::string("cuda of a ") + b.library + " build is a CUDA " +
                          (parts == 2 ? "minor (like \"12.9\")" : "major (like \"12\")") + ", got \"" +
                          cuda.scalar + "\"");
    b.sass = ComputeCapabilities(f, "sass");
    b.ptx = ComputeCapabilities(f, "ptx");
    if (const Node* n = f.Get("min_cc")) b.min_cc = ComputeCapability(*n);
    if (b.min_cc.has_value() == (!b.sass.empty() || !b.ptx.empty()))
      Fail(item.mark, "a library build names either min_cc or the code it carries (sass, ptx)");
    b.source = AsLine(f.Require("source"));
    for (const LibraryBuild& x : out.library_builds)
      if (x.library == b.library && x.version == b.version && x.cuda == b.cuda)
        Fail(item.mark, b.library + " " + b.version.str() + " for CUDA " + b.cuda.str() + " is listed twice");
    out.library_builds.push_back(std::move(b));
  }
}

bool LibraryBuild::Runs(const Version& cc) const {
  if (min_cc) return cc >= *min_cc;
  const bool cubin = std::any_of(sass.begin(), sass.end(), [&](const Version& s) {
    return s.major() == cc.major() && s.minor() <= cc.minor();
  });
  return cubin || std::any_of(ptx.begin(), ptx.end(), [&](const Version& p) { return p <= cc; });
}

std::string LibraryBuild::Carries() const {
  if (min_cc) return "compute capability " + min_cc->str() + " and later";
  std::string out = sass.empty() ? "" : "cubins for " + Strs(sass);
  if (!ptx.empty()) out += (out.empty() ? "" : " and ") + std::string("PTX for ") + Strs(ptx);
  return out;
}

const LibraryBuild* Compat::LibraryBuildFor(const std::string& library, const Version& version,
                                            const Version& cuda) const {
  for (const LibraryBuild& b : library_builds)
    if (b.library == library && b.cuda == cuda && version.size() >= b.version.size() &&
        version.Prefix(b.version.size()) == b.version)
      return &b;
  return nullptr;
}

std::string LibraryCannotRun(const Compat& c, const Stack& s, const GpuModel& g) {
  std::string why = LibraryWhy(c, s, g, "nccl", "NCCL", s.nccl, true);
  return why.empty() ? LibraryWhy(c, s, g, "cudnn", "cuDNN", s.cudnn, false) : why;
}

std::vector<std::string> LibraryWarnings(const Stack& s) {
  const Compat& c = EmbeddedCompat();
  std::vector<std::string> out;
  for (const GpuModel& g : c.gpus) {
    if (!s.Claims(g)) continue;
    const std::string why = LibraryCannotRun(c, s, g);
    if (why.empty()) continue;
    const std::string board =
        g.pci_ids.front() + (g.subsystems.empty() ? "" : " " + Join(g.subsystems, ", "));
    out.push_back("stack claims " + g.name + " (" + board + ", " + g.arch + ") but " + why);
  }
  return out;
}

}  // namespace gp::manifest
