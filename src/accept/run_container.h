// The container runner (--runtime container): the measurement program in the stack's image through the
// Engine API, with every GPU, its output attached before it starts and fed to a ProgramStream as it comes.
// The container is labelled with the run (kAcceptLabel) and removed by the engine when it ends
// (AutoRemove); gpuprep removes it itself when it stops it (a deadline, a bound, Ctrl-C) or when anything
// fails, and the next run removes what a killed gpuprep left behind (ReapStale).
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "accept/run_host.h"
#include "accept/stream.h"
#include "docker/engine.h"

namespace gp::accept {

inline constexpr const char* kAcceptLabel = "gpuprep.accept";

// The label's value for this run: "PID-START" (the gpuprep process and its start, seconds since 1970),
// so that a later run can tell a live run's container from one left behind.
std::string RunLabel(long pid, long long started_unix);
// The pid a label names; 0 when it names none.
long LabelPid(const std::string& label);

struct Reaped {
  std::vector<std::string> removed;  // containers a gpuprep that is gone left behind, now removed
  std::string busy;                  // set when a live gpuprep's run holds the GPUs: what to tell the user
  std::string error;                 // the engine could not list or remove them
};
// Removes the labelled containers whose gpuprep (by the label's pid) is no longer alive.
Reaped ReapStale(docker::Engine& engine, const std::function<bool(long pid)>& alive);

// Runs `run` (its image, command and GPU request set; labels, AutoRemove and the limit are set here) with
// its output into `stream`, at most `limit` in all; `interrupted` (Ctrl-C) stops it. Calls stream.Finish.
ProgramEnd RunInContainer(docker::Engine& engine, docker::ContainerRun run, const std::string& label,
                          ProgramStream& stream, std::chrono::seconds limit,
                          const std::function<bool()>& interrupted);

}  // namespace gp::accept
