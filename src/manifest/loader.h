// Loading and validating manifests. All YAML handling is private to manifest/*.cc; errors are
// gp::FileError "PATH:LINE:COL: message" (exit 2), tested word for word in tests/manifest/.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "manifest/source.h"

namespace gp::sys {
class Fs;
class HttpClient;
}  // namespace gp::sys

namespace gp::manifest {

// The compatibility facts compiled into the binary (manifests/compat.yaml), built once from prebuilt.h.
const Compat& EmbeddedCompat();
// The same facts for one host's run (doctor, the default choice, the probe): every table but the GPU
// catalogue, whose rows GpuByPci decodes on demand, only those of the device ids asked for. `gpus` is empty.
const Compat& EmbeddedHostCompat();

// Names of the embedded stacks (manifests/stacks/*.yaml, by metadata.name), sorted.
std::vector<std::string> EmbeddedStackNames();

// Where --manifest values are read from. `fs` is the machine gpuprep runs on (not --root);
// `http` may be null, then URLs are refused.
struct LoadContext {
  sys::Fs* fs = nullptr;
  sys::HttpClient* http = nullptr;
};

// Loads a stack from where `from` says (embedded, a file through ctx.fs, or a URL through ctx.http),
// follows `extends:`, validates. Throws gp::FileError / gp::Error(kExitUsage).
Stack LoadStack(const ManifestSource& from, const LoadContext& ctx);
// The same for a written NAME, PATH or https URL (ParseManifestSource against ctx.fs first).
Stack LoadStack(const std::string& spec, const LoadContext& ctx);

// Parses one stack document; `display_path` is what errors name. `extends` targets are loaded through
// ctx (relative paths resolve beside display_path). Exposed for tests.
// `check_claims`: also fail when a board the stack claims (its architectures less boards_excluded) cannot run
// on its pinned driver per compat.yaml (driver_rules, per-release support); `manifest validate` sets it.
Stack ParseStack(const std::string& text, const std::string& display_path, const LoadContext& ctx,
                 bool check_claims = false);

// Parses a compat document (tests feed broken ones).
Compat ParseCompat(const std::string& text, const std::string& display_path);

// Validates any gpuprep/v1 document (kind Stack, Compat, Profile, Task, Prices or Offer) and returns its
// kind; throws on the first error. Used by `manifest validate` (which checks Profile, Task and Offer bodies
// through their owners).
std::string ValidateDocument(const std::string& text, const std::string& display_path,
                             const LoadContext& ctx);

// What the default choice knows about a host: its OS (/etc/os-release ID, VERSION_ID), its GPUs'
// architectures and their catalogue entries (compat.yaml gpus; unknown boards are left out).
struct HostQuery {
  std::string os_id, os_version_id;
  std::vector<std::string> architectures;
  std::vector<const GpuModel*> boards;
};

// Whether `s` supports the host: its `os` lists the host's, its architectures every GPU's, and it claims
// every known board with a driver and libraries that run it (GpuModel::StackCannotRun, LibraryCannotRun).
bool SupportsHost(const Stack& s, const HostQuery& host);

// Whether each library the stack pins (NCCL, cuDNN) carries code for the board (compat.yaml library_builds);
// "" when it does or nothing is known, else why not: "NCCL 2.30.7 (its CUDA 12.9 build) has no code for
// compute capability 5.2 (...)". A pin without a row is not checked.
std::string LibraryCannotRun(const Compat& c, const Stack& s, const GpuModel& g);
// One line per catalogue board the stack claims that one of its libraries cannot run (manifest validate's
// warnings, stack.library-unsupported-board).
std::vector<std::string> LibraryWarnings(const Stack& s);

// The order the default choice ranks stacks in: a long-term-support driver branch first (compat.yaml
// driver_branches), then the newest CUDA, then the newest driver, then the broadest stack (most
// architectures). True when `a` ranks above `b`.
bool RanksAbove(const Stack& a, const Stack& b);
// Whether `a` is level with `b` and built on it (extends it): its successor, which adds to its pins.
bool Succeeds(const Stack& a, const Stack& b);

// The default stack for a host that has never been applied (docs/cli.md "Which stack"): the embedded,
// non-legacy stack that supports it and ranks highest (RanksAbove), of two level ones the successor
// (Succeeds); `reason` says why (printed to stderr).
// Throws UsageError naming the host when no embedded stack supports it.
struct DefaultChoice {
  std::string name;
  std::string reason;
};
DefaultChoice ChooseDefaultStack(const HostQuery& host);

}  // namespace gp::manifest
