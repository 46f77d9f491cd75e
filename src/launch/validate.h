// Parsing and checking of single launch flag values. Each parser throws FlagError naming the flag, with
// the message tested word for word in tests/launch/validation_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "launch/config.h"

namespace gp::launch {

// POSIX shell name: [A-Za-z_][A-Za-z0-9_]*.
bool ValidEnvName(const std::string& name);

// "all" | "none" | "N" (a count >= 1, as docker reads it) | "i,j,..." | "device=i[,j...]" (indices). "none"
// is kNone (no GPU); "0" is an error.
GpuSelection ParseGpus(const std::string& value);

// "SRC:DST" or "SRC:DST:ro|rw"; SRC and DST absolute. A SRC may itself not contain ':' (docker's rule).
Mount ParseMount(const std::string& value);

// "NAME=VALUE" (VALUE may be empty or contain '='); NAME must be a valid environment name.
std::pair<std::string, std::string> ParseEnv(const std::string& value);

// "ADDR:PORT" (ADDR a host name, IPv4 or [IPv6]); PORT 1..65535.
std::pair<std::string, int> ParseMaster(const std::string& value);

// Docker's container name rule: [a-zA-Z0-9][a-zA-Z0-9_.-]*.
bool ValidContainerName(const std::string& name);

// A Kubernetes extended-resource name, as the API server validates one (IsExtendedResourceName in
// kubernetes/pkg/apis/core/helper/helpers.go): "PREFIX/NAME", not in the kubernetes.io domain, such that
// "requests.PREFIX/NAME" is a qualified name: PREFIX a DNS subdomain (lower-case alphanumerics, '-' and '.',
// each label starting and ending alphanumeric; with "requests." at most 253 characters), NAME at most 63
// characters of alphanumerics, '-', '_' and '.', starting and ending alphanumeric.
bool ValidExtendedResourceName(const std::string& name);

// Docker's --shm-size syntax ("64m", "16g", "1073741824"); must be > 0.
uint64_t ParseShm(const std::string& value);

}  // namespace gp::launch
