// `source:` and `redist:` of a cuda/cudnn stack section (model.h RedistSpec), validated where they enter.
#pragma once
#include <string>

#include "manifest/fields.h"

namespace gp::manifest {

// Reads `source` ("apt" default, or "redist" where `redist_allowed`) and the `redist:` map of section `name`.
// Errors point at the value: a source other than apt/redist, redist for NCCL, a `redist:` map without
// `source: redist`, a base that is not https (plain http only from a loopback host and with json_sha256), a
// URL with user info, a query or odd characters, a directory that is not absolute or climbs with "..", a
// release or component name outside [0-9.] / [a-z0-9_], a json_sha256 that is not 64 lower-case hex digits.
void ParseSource(Fields& f, const std::string& name, bool redist_allowed, ComponentSpec& c);

// NVIDIA's redist base for a layer: https://developer.download.nvidia.com/compute/<layer>/redist/
std::string NvidiaRedistBase(const std::string& layer);

}  // namespace gp::manifest
