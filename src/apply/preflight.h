// Before apply changes anything: the stack repositories' current index, fetched by apt itself into a
// private directory (its own sources list, keyrings and lists under /var/lib/gpuprep/preflight, removed
// afterwards), so exact versions are resolved from what the repository holds today and a pin it no longer
// carries is refused while the host's apt configuration is still untouched.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "apply/executor.h"
#include "apt/availability.h"
#include "apt/index.h"
#include "manifest/model.h"

namespace gp::apply {

inline constexpr const char* kPreflightDir = "/var/lib/gpuprep/preflight";

struct PreflightResult {
  apt::Index index;
  std::string error;  // one line; "" on success
  bool ok() const { return error.empty(); }
};

// The apt-get argv that refreshes only `dir`'s sources into `dir`/lists (host paths).
std::vector<std::string> PrivateUpdateArgv(const std::string& host_dir);

// Fetches and checks each repository's key, runs PrivateUpdateArgv, and reads the lists for `arch`.
PreflightResult FetchRepositoryIndex(const std::vector<const manifest::AptRepository*>& repos,
                                     const std::string& arch, ExecEnv& env);

inline constexpr const char* kPreflightHostDir = "/var/lib/gpuprep/preflight-host";

// The apt-get argv that refreshes the host's own sources (its configuration as it stands) into a private
// `host_dir`/lists: the host's lists and package caches stay as they are.
std::vector<std::string> HostSourcesUpdateArgv(const std::string& sources_list,
                                               const std::string& sources_parts, const std::string& host_dir);

// Whether the host's distribution publishes each kernel package in `packages` today (the running kernel's
// headers, its extra modules), read from the host's sources fetched once by HostSourcesUpdateArgv before any
// change. kUnknown when apt could not fetch every source (the answer would not be trustworthy): apply then
// goes on as before.
std::map<std::string, apt::ListsAnswer> FetchKernelPackageAnswers(const std::vector<std::string>& packages,
                                                                  ExecEnv& env);

}  // namespace gp::apply
