// The three ways `gpuprep plan` prints a plan: text for people, a POSIX shell script an admin can review
// and run by hand (`--format sh`), and JSON. All show exactly what `apply` would run.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "plan/plan.h"

namespace gp::plan {

// Layer table, then numbered steps with their commands; "nothing to do" for an empty plan.
std::string RenderText(const Plan& plan);

// "#!/bin/sh", `set -eu`, a comment per step, one quoted argv per line, file writes as quoted heredocs,
// key downloads as curl + sha256sum / gpg fingerprint checks. `gpuprep` names the binary for verify steps.
std::string RenderSh(const Plan& plan, const std::string& gpuprep = "gpuprep");

nlohmann::json RenderJson(const Plan& plan);

}  // namespace gp::plan
