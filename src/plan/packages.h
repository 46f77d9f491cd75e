// The planner's package values: the host's package state (the dpkg database with holds, and gpuprep's apt
// preferences file, read once before planning: plan/host_state.h) and one layer's package decision (each
// package installed at its pin is kept, else resolved from the repositories' index into the one apt
// transaction). Pure once read.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apt/dpkg_status.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/resolve.h"
#include "manifest/model.h"
#include "probe/state.h"

namespace gp::plan {

struct PackageState {
  std::map<std::string, std::string> installed;  // every installed package -> version (the highest)
  std::map<std::string, apt::DpkgEntry> dpkg;    // every stanza of the status file by name (hold, state)
  std::string preferences;                       // gpuprep's preferences file as it is ("" when absent)
  std::map<std::string, apt::Pin> pins;          // ... and its pins

  const std::string* Installed(const std::string& name) const;  // nullptr when not installed
  bool Held(const std::string& name) const;                     // dpkg's "hold" want state
};

// The package state of a dpkg database (probe/state.h ReadDpkgDatabase, the one reader of the status file
// and its updates/ journal) and gpuprep's preferences file (apt::kPreferencesPath; nullopt when absent).
PackageState PackageStateOf(const probe::DpkgDatabase& db, const std::optional<std::string>& preferences);

// A package a layer installs or keeps, at its exact version: a root of the closure.
struct PackageRoot {
  std::string layer, name, version;
};

// What a layer's packages need.
struct PackageDecision {
  std::string detail;                // "missing: a=1, b=2; not held: c" ("" when nothing is missing)
  std::string error;                 // the index cannot serve a pin: the layer is refused
  std::vector<PackageRoot> roots;    // the packages decided before any error, in the stack's order
  std::vector<std::string> install;  // apt-get install words ("name=version", "name=1.2-*")
  bool allow_held = false;           // a held package changes version
  bool needs_index = false;          // exact revisions are left to apply time
};

struct PackageContext {
  const PackageState* state = nullptr;
  const apt::Index* index = nullptr;  // nullptr: revisions resolved at apply time
  std::string cuda;                   // the stack's CUDA major.minor ("" when none)
};

// The pin rule of one package. cuDNN and NCCL packages may name the CUDA build in their revision
// (8.9.7.29-1+cuda12.2, 2.27.7-1+cuda13.0): `cuda_builds` matches it.
apt::PinRule Rule(const manifest::AptPackage& p, const std::string& layer_version, bool cuda_builds,
                  const std::string& cuda);

PackageDecision DecidePackages(const PackageContext& ctx, const std::string& layer,
                               const std::vector<manifest::AptPackage>& pkgs,
                               const std::string& layer_version, bool cuda_builds = false);

// The installed version of the first of `pkgs` that is installed ("" when none is).
std::string FoundVersion(const PackageState& state, const std::vector<manifest::AptPackage>& pkgs);

}  // namespace gp::plan
