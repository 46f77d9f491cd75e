// /etc/docker/daemon.json, edited without losing anything: the NVIDIA runtime registered under
// "runtimes", and, as the stack says, "default-runtime" and "features.cdi". Every other key, nested ones
// too, keeps its value and its place (an order-preserving JSON tree); a file that is not a JSON object, or is
// larger or deeper than gpuprep edits (docker/json_tree.h: 1 MiB, 32 levels), is refused with its line and
// column and never rewritten. Time and memory are linear in the file's size (parse, write and diff alike).
// Pure: the caller reads and writes the file.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gp::docker {

inline constexpr const char* kDaemonJsonPath = "/etc/docker/daemon.json";

struct DaemonJsonWant {
  std::string runtime = "nvidia";                         // runtimes.<runtime>
  std::string runtime_path = "nvidia-container-runtime";  // what `nvidia-ctk runtime configure` writes
  bool default_runtime = false;                           // "default-runtime": runtime
  std::optional<bool> cdi;                                // "features": {"cdi": ...}; nullopt = leave it
};

struct DaemonJsonEdit {
  bool changed = false;  // false: the file already says all of it (no write, no reload)
  std::string text;      // the new file (when changed): 4-space indent, trailing newline
  std::vector<std::string>
      changes;       // one line per change: "runtimes.nvidia: added", "features.cdi: false -> true"
  std::string diff;  // line diff old -> new ("-"/"+"/" " prefixed), for `plan`
  bool restart_required = false;  // a change dockerd does not take on SIGHUP (features.cdi: CDI is set up
                                  // at start); false: `systemctl reload docker` (SIGHUP) is enough
};

// `current`: the file's text, nullopt when absent. Empty or blank text counts as {}, "runtimes": null and
// "features": null as empty objects. Throws gp::FileError("PATH:LINE:COL: ...", exit 2) when the text is
// longer than 1 MiB or nested deeper than 32 levels (checked before it is parsed), not JSON, not an object,
// or "runtimes"/"features"/"runtimes.<runtime>" hold something other than an object, and when the edited
// text would be longer than 1 MiB (so every file it writes it reads again).
DaemonJsonEdit EditDaemonJson(const std::optional<std::string>& current, const DaemonJsonWant& want,
                              const std::string& display_path = kDaemonJsonPath);

// A line diff of two texts: "- old", "+ new", "  same" lines, every line of each text once and in order.
// O(n log n) time, O(n) memory (a patience diff, line_diff.cc); not always the shortest diff.
std::string LineDiff(const std::string& before, const std::string& after);

}  // namespace gp::docker
