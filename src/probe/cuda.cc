// The CUDA toolkit: where it is (CUDA_HOME, gpuprep's redistributable install /opt/gpuprep/cuda/current,
// /usr/local/cuda, /usr/local/cuda-X.Y, nvcc on PATH) and its full version. Sources, cheapest first:
// version.json, the wheels' dist-info names (a toolkit assembled
// from pip wheels: nvidia_cuda_nvcc-13.0.88.dist-info says 13.0.88 exactly as `nvcc --version` would,
// without spawning nvcc, which costs milliseconds), `nvcc --version` (live only, last file-less resort),
// cudart through dlopen (live only: "13.0"), the redistributable install's directory name, and finally the
// dpkg cuda-toolkit-X-Y package.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "probe/parsers.h"
#include "probe/steps.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::probe {
namespace {

bool DateStyle(const std::string& v) {  // "12.6.20241114": the third part is a date, not a patch level
  auto p = Version::Parse(v);
  return p && p->size() >= 3 && p->parts()[2] >= 19000000;
}

// gpuprep's install of NVIDIA's redistributable CUDA archives (`source: redist`): current -> 12.2.2.
constexpr const char* kRedistCurrent = "/opt/gpuprep/cuda/current";

// Toolkit prefixes in order of preference, without duplicates.
std::vector<std::string> Candidates(const ProbeEnv& env) {
  const sys::Fs& fs = *env.fs;
  std::vector<std::string> out;
  auto add = [&](std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    // Resolve a link first (an absolute target must be looked up inside a --root tree), and report
    // /usr/local/cuda-13.0 rather than the /usr/local/cuda link.
    if (auto target = fs.ReadLink(p)) p = ResolveLink(p, *target);
    if (p.empty() || !fs.IsDir(p)) return;
    for (const auto& o : out) {
      if (o == p) return;
    }
    out.push_back(p);
  };
  if (Live(env)) add(EnvVar(env, "CUDA_HOME"));
  add(kRedistCurrent);  // deliberate, like the cuDNN one (probe/library.cc): before /usr/local/cuda
  add("/usr/local/cuda");
  std::vector<std::pair<Version, std::string>> versioned;
  for (const auto& name : fs.List("/usr/local")) {
    if (!StartsWith(name, "cuda-")) continue;
    if (auto v = Version::Parse(name.substr(5))) versioned.emplace_back(*v, "/usr/local/" + name);
  }
  std::sort(versioned.begin(), versioned.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [v, p] : versioned) add(p);
  if (Live(env)) {
    for (const auto& dir : Split(EnvVar(env, "PATH"), ':')) {
      if (!dir.empty() && EndsWith(dir, "/bin") && fs.Exists(dir + "/nvcc"))
        add(dir.substr(0, dir.size() - 4));
    }
  }
  return out;
}

bool FromDistInfo(const sys::Fs& fs, const std::string& dir, Component& c) {
  std::optional<DistInfo> nvcc, runtime;
  for (const auto& name : fs.List(dir)) {
    if (!StartsWith(name, "nvidia_cuda_")) continue;
    auto d = ParseDistInfoName(name);
    if (!d) continue;
    if (StartsWith(d->project, "nvidia_cuda_nvcc"))
      nvcc = d;
    else if (StartsWith(d->project, "nvidia_cuda_runtime"))
      runtime = d;
  }
  const auto& best = nvcc ? nvcc : runtime;
  if (!best) return false;
  c.version = best->version;
  c.source = "pip:" + best->project;
  return true;
}

}  // namespace

CudaVersionJson ParseCudaVersionJson(std::string_view text) {
  CudaVersionJson r;
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    r.error = "not a JSON object";
    return r;
  }
  auto get = [&](const char* key) -> std::string {
    auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return "";
    auto v = it->find("version");
    return v != it->end() && v->is_string() ? v->get<std::string>() : "";
  };
  r.sdk = get("cuda");
  for (const char* key : {"cuda_nvcc", "cuda_cudart"}) {
    if (auto v = get(key); Version::Parse(v)) {
      r.version = v;
      r.field = key;
      return r;
    }
  }
  if (Version::Parse(r.sdk)) {
    r.version = DateStyle(r.sdk) ? Version::Parse(r.sdk)->Prefix(2).str() : r.sdk;
    r.field = "cuda";
  }
  return r;
}

std::optional<std::string> ParseNvccVersion(std::string_view text) {
  // "Cuda compilation tools, release 13.0, V13.0.88"
  auto at = text.find("release ");
  if (at == std::string_view::npos) return std::nullopt;
  auto line_end = text.find('\n', at);
  auto words = SplitWords(
      text.substr(at, line_end == std::string_view::npos ? std::string_view::npos : line_end - at));
  std::string release = words.size() > 1 ? words[1] : "";
  if (!release.empty() && release.back() == ',') release.pop_back();
  if (words.size() > 2 && words[2].size() > 1 && words[2][0] == 'V' && Version::Parse(words[2].substr(1))) {
    return words[2].substr(1);
  }
  if (Version::Parse(release)) return release;
  return std::nullopt;
}

namespace {

// The version a toolkit prefix's version.json gives, if any; a note when it gives none.
void CudaFromVersionJson(const sys::Fs& fs, const std::string& prefix, Component& c) {
  if (auto vj = fs.Read(prefix + "/version.json")) {
    auto parsed = ParseCudaVersionJson(*vj);
    if (!parsed.version.empty()) {
      c.version = parsed.version;
      c.source = "version.json";
      if (parsed.field != "cuda_nvcc")
        c.notes.push_back("version.json: version from \"" + parsed.field + "\"");
    } else {
      c.notes.push_back(prefix + "/version.json: no usable version (" +
                        (parsed.error.empty() ? "no version key" : parsed.error) + ")");
    }
  }
}

// The version `prefix/bin/nvcc --version` prints (live only); a note when it fails.
void CudaFromNvcc(const ProbeEnv& env, const std::string& prefix, Component& c) {
  sys::Command cmd;
  cmd.argv = {prefix + "/bin/nvcc", "--version"};
  cmd.timeout = std::chrono::milliseconds(5000);
  auto res = env.runner->Run(cmd);
  if (auto v = res.ok() ? ParseNvccVersion(res.out) : std::nullopt) {
    c.version = *v;
    c.source = "nvcc";
  } else {
    c.notes.push_back(prefix + "/bin/nvcc --version failed" + (res.timed_out ? " (timed out)" : ""));
  }
}

// The first candidate prefix with a version (version.json, dist-info, nvcc, the redistributable install's
// name) or an nvcc becomes the toolkit's path.
void CudaFromPrefixes(const ProbeEnv& env, const std::vector<std::string>& candidates, Component& c) {
  const sys::Fs& fs = *env.fs;
  // The redistributable install's versioned prefix, named by gpuprep after the release label of the redistrib
  // JSON whose archives it verified (NVIDIA's archives carry no version.json).
  std::string redist_prefix, redist_version;
  if (auto target = fs.ReadLink(kRedistCurrent); target && Version::Parse(*target)) {
    redist_prefix = ResolveLink(kRedistCurrent, *target);
    redist_version = *target;
  }
  for (const auto& prefix : candidates) {
    CudaFromVersionJson(fs, prefix, c);
    if (c.version.empty()) FromDistInfo(fs, prefix + "/dist-info", c);
    if (c.version.empty() && Live(env) && env.runner && fs.Exists(prefix + "/bin/nvcc"))
      CudaFromNvcc(env, prefix, c);
    if (c.version.empty() && prefix == redist_prefix && fs.IsDir(prefix + "/lib")) {
      c.version = redist_version;
      c.source = std::string("redist:") + kRedistCurrent;
    }
    if (!c.version.empty() || fs.Exists(prefix + "/bin/nvcc")) {
      c.path = prefix;
      break;
    }
  }
}

// cudart through dlopen, the candidates' lib dirs first (live only). Once, after all candidates: the
// loader's default search could otherwise credit one prefix with another toolkit's library.
void CudaFromDlopen(const ProbeEnv& env, const std::vector<std::string>& candidates, Component& c) {
  std::vector<std::string> dirs;
  for (const auto& prefix : candidates) {
    dirs.push_back(prefix + "/lib64");
    dirs.push_back(prefix + "/lib");
  }
  auto call = env.native->CudaRuntimeVersion(dirs);
  if (call.loaded && call.value) {
    c.version = CudaVersionFromCode(*call.value);
    c.source = "dlopen:" + call.path;
    for (const auto& prefix : candidates) {
      if (StartsWith(call.path, prefix + "/")) {
        c.path = prefix;
        break;
      }
    }
  }
}

// The highest upstream version of the dpkg cuda-toolkit-X-Y packages, if any.
void CudaFromDpkg(const HostFacts& facts, Component& c) {
  std::optional<Version> best;
  for (const auto& [name, pkg] : facts.packages) {
    if (!StartsWith(name, "cuda-toolkit-")) continue;
    auto v = Version::Parse(DebVersion::Parse(pkg.version).upstream);
    if (v && (!best || *v > *best)) {
      best = v;
      c.source = "dpkg:" + name;
    }
  }
  if (best) c.version = best->str();
}

}  // namespace

void ProbeCuda(const ProbeEnv& env, HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  Component& c = facts.cuda;
  const std::vector<std::string> candidates = Candidates(env);
  CudaFromPrefixes(env, candidates, c);
  if (c.version.empty() && c.path.empty() && Live(env) && env.native) CudaFromDlopen(env, candidates, c);
  if (c.version.empty()) {
    // A runtime from wheels in site-packages (no toolkit prefix), then the dpkg meta-package.
    for (const auto& dir : DistInfoDirs(env, facts)) {
      if (FromDistInfo(fs, dir, c)) {
        c.path = dir;
        break;
      }
    }
  }
  if (c.version.empty()) CudaFromDpkg(facts, c);
  c.found = !c.version.empty();
  if (c.found) {
    if (auto v = Version::Parse(c.version)) c.cuda_major = static_cast<int>(v->major());
  } else {
    facts.probe_notes.push_back(
        "cuda: no CUDA toolkit found (/usr/local/cuda*, /opt/gpuprep/cuda, CUDA_HOME, nvcc on PATH, dpkg)");
  }
}

}  // namespace gp::probe
