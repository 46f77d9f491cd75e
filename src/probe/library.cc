// The shared search for cuDNN and NCCL: headers, dpkg, pip wheels, and on the live host the library itself.
#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

std::vector<std::string> IncludeDirs(const HostFacts& facts) {
  std::vector<std::string> dirs = {"/usr/include", "/usr/include/x86_64-linux-gnu",
                                   "/usr/include/aarch64-linux-gnu"};
  if (!facts.cuda.path.empty()) dirs.push_back(facts.cuda.path + "/include");
  dirs.push_back("/usr/local/cuda/include");
  return dirs;
}

bool FromHeaders(const ProbeEnv& env, const HostFacts& facts, const LibrarySpec& spec, Component& c) {
  // gpuprep's own redistributable install (/opt/gpuprep/cudnn/current -> 9.12.0.46-cuda12) is deliberate and
  // comes first; its directory name says which CUDA major the archive was built for.
  const std::string redist = "/opt/gpuprep/" + spec.label + "/current";
  std::vector<std::string> dirs = IncludeDirs(facts);
  std::string redist_version;
  if (auto target = env.fs->ReadLink(redist)) {
    dirs.insert(dirs.begin(), redist + "/include");
    auto cu = target->rfind("-cuda");
    redist_version = target->substr(0, cu);
    if (cu != std::string::npos)
      if (auto n = ParseUnsigned(std::string_view(*target).substr(cu + 5)))
        c.cuda_major = static_cast<int>(*n);
  }
  for (const auto& dir : dirs) {
    for (const auto& name : spec.header_names) {
      const std::string path = dir + "/" + name;
      // The version macros sit near the top; 16 KiB covers cudnn.h of cuDNN 7 too.
      auto text = env.fs->ReadPrefix(path, 16384);
      if (!text) continue;
      if (auto v = spec.parse_header(*text)) {
        c.version = *v;
        // The redist prefix's name carries the full version (9.12.0.46) where the header stops at 9.12.0.
        if (StartsWith(dir, redist) && redist_version.size() > v->size() &&
            StartsWith(redist_version, *v + "."))
          c.version = redist_version;
        c.source = "header:" + path;
        c.path = dir;
        return true;
      }
    }
  }
  return false;
}

// Highest installed runtime package; fills the CUDA major it was built for.
void FromDpkg(const HostFacts& facts, const LibrarySpec& spec, Component& c, bool take_version) {
  const InstalledPackage* best = nullptr;
  for (const auto& [name, pkg] : facts.packages) {
    if (!spec.is_runtime_package(name)) continue;
    if (!best || CompareDebVersions(pkg.version, best->version) > 0) best = &pkg;
  }
  if (!best) return;
  if (!c.cuda_major) {
    c.cuda_major = CudaMajorFromDebVersion(best->version);
    if (!c.cuda_major) c.cuda_major = CudaMajorFromPackageName(best->name);
  }
  if (take_version) {
    c.version = DebVersion::Parse(best->version).upstream;
    c.source = "dpkg:" + best->name;
  }
}

void FromPip(const ProbeEnv& env, const HostFacts& facts, const LibrarySpec& spec, Component& c,
             bool take_version) {
  for (const auto& dir : DistInfoDirs(env, facts)) {
    for (const auto& name : env.fs->List(dir)) {
      if (!StartsWith(name, spec.pip_prefix)) continue;
      auto d = ParseDistInfoName(name);
      if (!d) continue;
      if (!c.cuda_major) c.cuda_major = d->cuda_major;
      if (take_version) {
        c.version = d->version;
        c.source = "pip:" + d->project;
        c.path = dir;
      }
      return;
    }
  }
}

}  // namespace

std::optional<DistInfo> ParseDistInfoName(std::string_view name) {
  if (!EndsWith(name, ".dist-info")) return std::nullopt;
  name.remove_suffix(10);
  auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 >= name.size()) return std::nullopt;
  DistInfo d;
  d.project = std::string(name.substr(0, dash));
  d.version = std::string(name.substr(dash + 1));
  if (d.version[0] < '0' || d.version[0] > '9') return std::nullopt;
  auto cu = d.project.rfind("_cu");
  if (cu != std::string::npos) {
    if (auto n = ParseUnsigned(std::string_view(d.project).substr(cu + 3)))
      d.cuda_major = static_cast<int>(*n);
  }
  return d;
}

std::optional<int> CudaMajorFromDebVersion(std::string_view version) {
  auto at = version.rfind("+cuda");
  if (at == std::string_view::npos) return std::nullopt;
  auto rest = version.substr(at + 5);
  auto dot = rest.find('.');
  if (auto n = ParseUnsigned(rest.substr(0, dot))) return static_cast<int>(*n);
  return std::nullopt;
}

std::optional<int> CudaMajorFromPackageName(std::string_view name) {
  auto at = name.rfind("-cuda-");
  if (at == std::string_view::npos) return std::nullopt;
  if (auto n = ParseUnsigned(name.substr(at + 6))) return static_cast<int>(*n);
  return std::nullopt;
}

void ProbeLibrary(const ProbeEnv& env, HostFacts& facts, const LibrarySpec& spec, Component& c) {
  bool have = FromHeaders(env, facts, spec, c);
  FromDpkg(facts, spec, c, !have);
  have = have || !c.version.empty();
  FromPip(env, facts, spec, c, !have);
  have = have || !c.version.empty();

  if (Live(env) && env.native) {
    std::vector<std::string> extra = CudaLibDirs(facts);
    sys::LibCall call = spec.load(*env.native, extra);
    if (call.loaded && call.value) {
      std::string lib_version = spec.from_code(*call.value);
      auto file_v = Version::Parse(c.version);
      auto lib_v = Version::Parse(lib_version);
      if (have && file_v && lib_v && file_v->Prefix(3) == *lib_v) {
        // Same release: keep the more precise file answer (dpkg's 8.9.7.29), record what was loaded.
        c.notes.push_back("loaded " + call.path + " (" + lib_version + ")");
      } else {
        if (have)
          c.notes.push_back(c.source + " says " + c.version + " but the loaded library is " + lib_version);
        c.version = lib_version;
        c.source = "dlopen:" + call.path;
      }
      c.path = call.path;
      have = true;
    } else if (call.loaded) {
      c.notes.push_back("library loaded but the version call failed: " + call.error);
    }
  }
  c.found = have;
  if (!have)
    facts.probe_notes.push_back(spec.label + ": not found (headers, dpkg, pip wheels" +
                                std::string(Live(env) ? ", dlopen)" : ")"));
}

}  // namespace gp::probe
