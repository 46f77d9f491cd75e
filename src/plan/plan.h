// The plan as data: what `apply` will do, computed from the stack and the probed host,
// containing only what is missing. `plan` prints it (plan/render.h); apply/executor.h runs exactly it.
#pragma once
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "redist/request.h"

namespace gp::plan {

// One thing a step does. Exactly the fields of its kind are meaningful.
struct Action {
  enum class Kind {
    kRun,          // run argv (+env) through the CommandRunner
    kWrite,        // write `contents` to `path` atomically with `mode`
    kMove,         // rename `path` to `to` (retire a conflicting file, keeping it as a backup)
    kFetch,        // download `url`, check sha256/fingerprint, write the (de-armored) key to `path`
    kVerify,       // run the active verify checks of layer `layer`
    kRebootCheck,  // detect whether a reboot is required (reasons read from the host, not guessed)
    kRedist,       // install NVIDIA redistributable archives (`redist`, redist/install.h) and switch to them
    kPull,         // pull `image` through the Engine API; the pulled digest must equal `digest` when set
  };
  Kind kind = Kind::kRun;
  std::vector<std::string> argv;           // kRun
  std::map<std::string, std::string> env;  // kRun
  std::chrono::seconds timeout{600};       // kRun
  bool apt_progress = false;               // kRun: apt-get install (APT::Status-Fd progress on a terminal)
  std::string path;                        // kWrite (the file replaced), kMove (from), kFetch (destination)
  std::string link;                        // kWrite: the symbolic link written through ("" = none; sys/fs.h)
  std::string to;                          // kMove
  std::string contents;                    // kWrite; kRebootCheck: the driver version that must be loaded
  unsigned mode = 0644;                    // kWrite, kFetch
  bool keep_backup = true;                 // kWrite
  std::string url;                         // kFetch
  std::string sha256;                      // kFetch: lower-case hex of the downloaded bytes
  std::string fingerprint;                 // kFetch: upper-case hex, no blanks
  std::string layer;                       // kVerify
  redist::Request redist;                  // kRedist
  std::string diff;                        // kWrite: what changes, line by line (shown by `plan`), optional
  std::string image;                       // kPull: the reference pulled (mirror and digest applied)
  std::string digest;                      // kPull: the stack's pinned digest ("" = record what comes)

  static Action Run(std::vector<std::string> argv, std::map<std::string, std::string> env = {});
  static Action Write(std::string path, std::string contents, unsigned mode = 0644, bool keep_backup = true);
  static Action Move(std::string from, std::string to);
  static Action Verify(std::string layer);
};

// A step: one journal entry. Its actions run in order; the first failure fails the step.
struct Step {
  std::string id;                   // stable: "apt.install", "repo.cuda.key", "verify.driver" (journal key)
  std::vector<std::string> layers;  // the layers it serves
  std::string title;                // one line for humans (the comment in --format sh)
  std::vector<Action> actions;
};

// What the plan decided for one layer.
struct LayerDecision {
  enum class Kind { kNone, kInstall, kReboot, kRefused, kSkipped, kNotApplicable };
  std::string name;
  Kind kind = Kind::kNone;
  std::string found;   // what the host has ("" when nothing)
  std::string wanted;  // what the stack pins
  std::string detail;  // why: "missing: libcudnn8=8.9.7.29-1+cuda12.2", or the refusal reason
};
// "none", "install", "reboot" (installed, waiting for a reboot), "refused", "skipped", "n/a"
const char* DecisionName(LayerDecision::Kind k);

struct Plan {
  std::string stack;                  // stack name
  std::string manifest;               // --manifest as given ("" = default)
  std::vector<LayerDecision> layers;  // in LayerNames() order, apt layers only
  std::vector<Step> steps;            // in execution order
  std::vector<std::string> blockers;  // reasons apply must stop before any change (Secure Boot, unpinned key)
  // The stack's layers --only/--skip leave out: their packages, holds and pins stay as they are.
  std::vector<std::string> left_alone;
  // Exact versions: where they came from ("the host's apt lists", "the repositories' index fetched at
  // apply time"; "" when not resolved), every package gpuprep pins and holds (the closure of the layers'
  // packages), and whether apply must fetch the repositories' index before it can decide.
  std::string resolved_from;
  std::vector<std::pair<std::string, std::string>> pins;
  bool needs_index = false;
  // The kernel packages the install adds from the distribution (the headers DKMS needs, the extra modules
  // with ib_umad): apply asks the distribution's index for them before any change.
  std::vector<std::string> kernel_packages;
  // Whether apply ends this plan with a reboot: a new driver loads only at the next boot (apply exits 3; with
  // --reboot it reboots by itself and the resume unit continues).
  bool reboot = false;
  // A move from the stack the host runs (PlanInput::from) to this one: its name and every pinned value that
  // changes (manifest::PinChanges: field, from, to; "" where one stack has no such field).
  struct Change {
    std::string field, from, to;
  };
  std::string move_from;
  std::vector<Change> move_changes;
  bool refused() const;  // any layer refused
  bool empty() const { return steps.empty(); }
  std::vector<std::string> Refusals() const;  // "cudnn: <reason>" per refused layer
};

}  // namespace gp::plan
