// The three ways `gpuprep plan` prints a plan: text for people, a POSIX shell script an admin can review
// and run by hand (`--format sh`), and JSON. All show exactly what `apply` would run.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace gp::plan {

// Layer table, then numbered steps with their commands; "nothing to do" for an empty plan.
std::string RenderText(const Plan& plan);

// How a script calls gpuprep again (its verify and redistributable steps, and the command that makes the rest
// of the plan): the binary and every flag of the plan that made it, the stack pinned by its documents' sha256
// (manifest::DocumentsSha256; gpuprep refuses a manifest that no longer has it).
struct ShOptions {
  std::string gpuprep = "gpuprep";
  std::string manifest;         // how to load the same stack: an embedded NAME, an absolute PATH, a URL
  std::string manifest_sha256;  // "" = not pinned (library callers; the CLI always pins)
  std::string root;             // --root, when the plan was made for a tree
  std::vector<std::string> only, skip;  // layer names
  bool restart_docker = false;
  // Where the plan needs the repositories' index (exact versions are resolved from it, and it is on the
  // host only once the script's first steps ran): false, the script stops after `apt-get update` and prints
  // the command that makes the rest of the plan as a second script, to review and run; true (--one-shot),
  // it runs that command itself and executes its output, unreviewed.
  bool one_shot = false;
};

// "#!/bin/bash", `set -euo pipefail`, a comment per step, one quoted argv per line, file writes as quoted
// heredocs, key downloads as curl + sha256sum / gpg fingerprint checks. Every value is single-quoted
// (sys::ShellQuote) or sits in a comment as TerminalSafe text.
std::string RenderSh(const Plan& plan, const ShOptions& options);
// The same with `gpuprep` as the binary and the plan's --manifest as given, not pinned.
std::string RenderSh(const Plan& plan, const std::string& gpuprep = "gpuprep");

// The argv that runs gpuprep `verb` with the options' global flags: [gpuprep, --root R, --manifest M,
// --manifest-sha256 H, verb].
std::vector<std::string> GpuprepArgv(const ShOptions& options, const std::string& verb);

nlohmann::json RenderJson(const Plan& plan);

}  // namespace gp::plan
