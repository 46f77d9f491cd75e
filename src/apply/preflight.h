// Before apply changes anything: the stack repositories' current index, fetched by apt itself into a
// private directory (its own sources list, keyrings and lists under /var/lib/gpuprep/preflight, removed
// afterwards), so exact versions are resolved from what the repository holds today and a pin it no longer
// carries is refused while the host's apt configuration is still untouched.
#pragma once
#include <string>
#include <vector>

#include "apply/executor.h"
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

}  // namespace gp::apply
