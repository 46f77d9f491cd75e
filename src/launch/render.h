// Renderers: a validated RunConfig -> the text `gpuprep launch --format F` prints. Pure functions; each
// output is tested by parsing it back (docker through a real shell and docker CLI, YAML with yaml-cpp).
#pragma once
#include <string>
#include <vector>

#include "launch/config.h"

namespace gp::launch {

// The exact `docker run` argv, grouped one option per group (the renderer prints one group per line).
std::vector<std::vector<std::string>> DockerArgvGroups(const RunConfig& c);
std::vector<std::string> DockerArgv(const RunConfig& c);  // the groups flattened

// The docker command as POSIX shell text: every word ShellQuote'd, groups joined with " \" newlines, so
// `sh -c` runs exactly DockerArgv(c). `--gpus '"device=0,1"'`: the argv element carries the double quotes.
std::string RenderDocker(const RunConfig& c);

// torchrun's argv for c.command: --nproc_per_node from the GPUs, --nnodes/--node_rank/--master_addr/
// --master_port when multi-node. "python[3] [-u] script.py ARGS" -> "torchrun ... script.py ARGS",
// "python -m mod" -> "torchrun ... -m mod", anything else -> "torchrun ... --no-python CMD ARGS".
// Throws FlagError when there is no command.
std::vector<std::string> TorchrunArgv(const RunConfig& c);
// `--format torchrun`: the docker command whose container command is the torchrun line; with --image
// none (c.bare) the torchrun line alone, for a bare-metal host or a shell already inside a container.
std::string RenderTorchrun(const RunConfig& c);

std::string RenderJson(const RunConfig& c);     // resolved values, origins, docker argv, torchrun argv
std::string RenderCompose(const RunConfig& c);  // templates/compose.yaml.tmpl
std::string RenderSlurm(const RunConfig& c);    // templates/slurm.sbatch.tmpl
std::string RenderK8s(const RunConfig& c);      // templates/k8s-job.yaml.tmpl

// Dispatch on the --format name (one of LaunchFormats()).
std::string Render(const RunConfig& c, const std::string& format);

// Docker's size text for bytes: "16g"/"512m"/"64k" when exact, else the byte count.
std::string DockerSize(uint64_t bytes);

}  // namespace gp::launch
