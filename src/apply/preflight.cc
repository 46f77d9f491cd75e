#include "apply/preflight.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "apply/keys.h"
#include "apt/commands.h"
#include "apt/sources.h"
#include "sys/tree.h"
#include "util/strings.h"

namespace gp::apply {

namespace {

// apt-get update of the sources `sources_list` and `sources_parts` into `dir`/lists (host paths), leaving
// the host's lists and package caches alone.
std::vector<std::string> UpdateArgv(const std::string& sources_list, const std::string& sources_parts,
                                    const std::string& dir) {
  return {"apt-get", "-q",
          "-o",      "Dir::Etc::SourceList=" + sources_list,
          "-o",      "Dir::Etc::SourceParts=" + sources_parts,
          "-o",      "Dir::State::Lists=" + dir + "/lists",
          "-o",      "Dir::Cache::pkgcache=",
          "-o",      "Dir::Cache::srcpkgcache=",
          "-o",      "Acquire::GzipIndexes=false",
          "-o",      "Acquire::Languages=none",
          "-o",      "APT::Get::List-Cleanup=false",
          "update"};
}

// A private directory of gpuprep's: whatever an earlier run left there is removed first, and the directory
// with everything in it when this goes out of scope.
class ScratchDir {
 public:
  ScratchDir(sys::Fs& fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {
    sys::RemoveTree(fs_.HostPath(dir_));
  }
  ~ScratchDir() { sys::RemoveTree(fs_.HostPath(dir_)); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

 private:
  sys::Fs& fs_;
  std::string dir_;
};

}  // namespace

std::vector<std::string> PrivateUpdateArgv(const std::string& host_dir) {
  return UpdateArgv(host_dir + "/sources.list", host_dir + "/sources.list.d", host_dir);
}

std::vector<std::string> HostSourcesUpdateArgv(const std::string& sources_list,
                                               const std::string& sources_parts,
                                               const std::string& host_dir) {
  return UpdateArgv(sources_list, sources_parts, host_dir);
}

std::map<std::string, apt::ListsAnswer> FetchKernelPackageAnswers(const std::vector<std::string>& packages,
                                                                  ExecEnv& env) {
  const std::string from = "the index of this host's apt sources, fetched just now";
  std::map<std::string, apt::ListsAnswer> out;
  if (packages.empty()) return out;
  const std::string names = Join(packages, ", ");
  sys::Fs& fs = *env.fs;
  const std::string dir = kPreflightHostDir;
  const ScratchDir scratch(fs, dir);
  if (auto r = fs.MakeDirs(dir + "/lists/partial", 0755); !r.ok) {
    spdlog::warn("cannot tell whether {} can be installed: {}", names, r.error);
    for (const auto& p : packages) out[p] = {apt::Availability::kUnknown, from};
    return out;
  }
  sys::Command cmd;
  cmd.argv = HostSourcesUpdateArgv(fs.HostPath("/etc/apt/sources.list"),
                                   fs.HostPath("/etc/apt/sources.list.d"), fs.HostPath(dir));
  cmd.env = apt::AptEnv();
  cmd.timeout = std::chrono::minutes(10);
  spdlog::info("asking this host's apt sources for {} (apt-get update into {})", names, dir);
  auto res = env.runner->Run(cmd);
  // apt-get update exits 0 after some fetch failures ("W: Failed to fetch ...", "W: Some index files failed
  // to download"): a package missing from a partial index proves nothing.
  const bool partial = !res.ok() || res.err.find("W: Failed to fetch") != std::string::npos ||
                       res.err.find("W: Some index files failed") != std::string::npos ||
                       res.err.find("E: ") != std::string::npos;
  for (const auto& package : packages) {
    auto answer = apt::FindKernelPackage(fs, dir + "/lists", package, from);
    if (partial && answer.state == apt::Availability::kMissing) answer.state = apt::Availability::kUnknown;
    if (answer.state == apt::Availability::kUnknown) {
      std::string why = LastLine(res.err);
      spdlog::warn("cannot tell whether this host's apt sources publish {}{}", package,
                   why.empty() ? "" : ": " + why);
    }
    out[package] = answer;
  }
  return out;
}

PreflightResult FetchRepositoryIndex(const std::vector<const manifest::AptRepository*>& repos,
                                     const std::string& arch, ExecEnv& env) {
  PreflightResult out;
  sys::Fs& fs = *env.fs;
  const std::string dir = kPreflightDir;
  const ScratchDir scratch(fs, dir);
  for (const char* sub : {"/lists/partial", "/sources.list.d", "/keys"}) {
    auto r = fs.MakeDirs(dir + sub, 0755);
    if (!r.ok) return {{}, r.error};
  }
  std::unique_ptr<sys::HttpClient> http = env.make_http ? env.make_http() : nullptr;
  if (!http) return {{}, "no HTTP client available to fetch the repositories' keys"};
  std::string sources;
  int n = 0;
  for (const auto* r : repos) {
    const std::string key_path = dir + "/keys/" + std::to_string(n++) + ".gpg";
    if (r->key_fingerprint.empty() && r->keyring_sha256.empty())
      return {{},
              "repository " + r->name + ": no key_fingerprint or keyring_sha256 pins " + r->keyring_url +
                  "; gpuprep will not trust an unpinned key"};
    auto key = DownloadKey(r->keyring_url, r->keyring_sha256, r->key_fingerprint, fs, *env.runner, *http);
    if (!key.ok()) return {{}, "repository " + r->name + ": " + key.error};
    auto w = fs.WriteAtomic(key_path, key.key, 0644, false);
    if (!w.ok) return {{}, w.error};
    manifest::AptRepository copy = *r;
    copy.keyring_path = fs.HostPath(key_path);
    sources += apt::ListLine(copy) + "\n";
  }
  auto w = fs.WriteAtomic(dir + "/sources.list", sources, 0644, false);
  if (!w.ok) return {{}, w.error};
  sys::Command cmd;
  cmd.argv = PrivateUpdateArgv(fs.HostPath(dir));
  cmd.env = apt::AptEnv();
  cmd.timeout = std::chrono::minutes(10);
  spdlog::info("reading the repositories' index (apt-get update into {})", dir);
  auto res = env.runner->Run(cmd);
  if (!res.ok()) {
    std::string why = LastLine(res.err);
    if (why.empty()) why = LastLine(res.out);
    return {{},
            res.not_found
                ? "apt-get: not found"
                : "apt-get update of the stack's repositories failed" + (why.empty() ? "" : ": " + why)};
  }
  // apt-get update exits 0 on some fetch failures ("W: Failed to fetch ..."): a repository without lists is
  // an error here.
  auto idx = apt::ReadRepoIndex(fs, repos, arch, dir + "/lists");
  if (!idx.complete) {
    std::string why = LastLine(res.err);
    return {{},
            "apt-get update fetched no package index for the stack's repositories" +
                (why.empty() ? "" : ": " + why)};
  }
  out.index = std::move(idx.index);
  spdlog::info("the repositories' index holds {} packages", out.index.size());
  return out;
}

}  // namespace gp::apply
