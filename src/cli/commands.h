// One registration function per verb (one file each in src/cli/), the micromamba way, and the table of
// verbs. RunCli makes each verb's subcommand with its name and one-line help; a verb's function adds its
// options to that subcommand and sets a callback that runs the verb and stores its exit code. Only the
// verbs a command line names get their options (a run parses one verb: the others' options cost start-up
// time and are never read).
#pragma once
#include "cli/context.h"

namespace CLI {
class App;
}

namespace gp::cli {

void RegisterDoctor(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterManifest(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterPlan(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterApply(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterVerify(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterLaunch(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterFleetReport(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterSize(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterWatch(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterAccept(CLI::App* sub, Context& ctx, int& exit_code);
void RegisterNcclLog(CLI::App* sub, Context& ctx, int& exit_code);

struct Verb {
  const char* name;
  const char* help;  // one line, in `gpuprep --help`
  void (*add)(CLI::App* sub, Context& ctx, int& exit_code);
};
// Every verb, in `gpuprep --help`'s order.
inline constexpr Verb kVerbs[] = {
    {"doctor", "Check every layer of this host against a stack (read-only)", RegisterDoctor},
    {"manifest", "List the embedded stacks, show one resolved, or validate a file", RegisterManifest},
    {"plan", "Print the steps apply would run (text, a shell script, or JSON)", RegisterPlan},
    {"apply", "Install what the stack needs on this host (root), verify, resume after reboot", RegisterApply},
    {"verify", "Active checks: driver and NVML agree, CUDA initialises, cuDNN/NCCL load", RegisterVerify},
    {"launch", "A validated docker/compose/torchrun/Slurm/Kubernetes launch for a host", RegisterLaunch},
    {"fleet-report", "One report from many hosts' doctor --json snapshots, grouped by finding",
     RegisterFleetReport},
    {"size", "The GPU memory a training task needs per GPU, term by term (docs/size.md)", RegisterSize},
    {"watch", "Sample the GPUs and the host; judge each window why GPUs are underused", RegisterWatch},
    {"accept", "Is this the server the offer promised? Measurements against sourced expectations (read-only)",
     RegisterAccept},
    {"nccl-log", "Read a job's NCCL_DEBUG=INFO log into the known multi-node failures, each with its fix",
     RegisterNcclLog},
};

}  // namespace gp::cli
