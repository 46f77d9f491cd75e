// An sbatch script: one task per node, GPUs per node as a count, the container through pyxis/enroot
// (srun --container-image), the command wrapped in torchrun with a c10d rendezvous on the first node.
// enroot containers keep the host's IPC namespace, so /dev/shm is the node's and needs no size.
#include "launch/render.h"
#include "launch/template.h"
#include "sys/process.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::launch {

namespace {

// enroot/pyxis spell a registry with '#': "nvcr.io/nvidia/pytorch:24.05-py3" ->
// "nvcr.io#nvidia/pytorch:24.05-py3".
std::string PyxisImage(const std::string& ref) {
  const size_t slash = ref.find('/');
  if (slash == std::string::npos) return ref;
  const std::string first = ref.substr(0, slash);
  const bool registry =
      first.find('.') != std::string::npos || first.find(':') != std::string::npos || first == "localhost";
  return registry ? first + "#" + ref.substr(slash + 1) : ref;
}

}  // namespace

std::string RenderSlurm(const RunConfig& c) {
  if (c.command.empty())
    throw FlagError("--format", "slurm needs the training command after --, e.g. -- python train.py");
  std::map<std::string, std::string> v;
  v["comment"] = c.profile.empty() ? "" : " (profile " + c.profile + ")";
  v["job_name"] = sys::ShellQuote(!c.name.empty() ? c.name : !c.profile.empty() ? c.profile : "gpuprep");
  v["nodes"] = std::to_string(c.multi.nodes);
  const int n = c.gpus.Number();
  v["gpus_directive"] = n > 0 ? "#SBATCH --gpus-per-node=" + std::to_string(n) : "";
  v["master_addr"] = c.multi.master_addr.empty()
                         ? "$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"
                         : sys::ShellQuote(c.multi.master_addr);
  v["master_port"] = std::to_string(c.multi.master_port);
  std::string exports;
  std::vector<std::string> names;
  for (const auto& [k, val] : c.env) {
    exports += "export " + k + "=" + sys::ShellQuote(val) + "\n";
    names.push_back(k);
  }
  if (!exports.empty()) exports.pop_back();
  v["env_exports"] = exports;

  std::vector<std::string> srun = {"srun", "--container-image=" + PyxisImage(c.image)};
  std::vector<std::string> mounts;
  for (const Mount& m : c.mounts) {
    if (m.source.find(',') != std::string::npos || m.target.find(',') != std::string::npos)
      throw FlagError("-v",
                      "pyxis --container-mounts cannot carry a ',' in a path: " + m.source + ":" + m.target);
    mounts.push_back(m.source + ":" + m.target + (m.read_only ? ":ro" : ""));
  }
  if (!mounts.empty()) srun.push_back("--container-mounts=" + Join(mounts, ","));
  if (!c.workdir.empty()) srun.push_back("--container-workdir=" + c.workdir);
  if (!names.empty()) srun.push_back("--container-env=" + Join(names, ","));

  // torchrun for every node; the rendezvous variables are expanded by this script's shell.
  RunConfig single = c;
  single.multi.nodes = 1;  // the static --node_rank form is replaced by the c10d rendezvous below
  std::vector<std::string> tr = TorchrunArgv(single);
  std::string line = sys::ShellJoin(srun) + " \\\n  " + sys::ShellJoin({tr[0], tr[1]}) +
                     " --nnodes=\"$SLURM_NNODES\" --rdzv_backend=c10d" +
                     " --rdzv_endpoint=\"$MASTER_ADDR:$MASTER_PORT\" --rdzv_id=\"$SLURM_JOB_ID\" \\\n  " +
                     sys::ShellJoin(std::vector<std::string>(tr.begin() + 2, tr.end()));
  v["launch"] = line;
  std::string tmpl = EmbeddedTemplate("slurm.sbatch.tmpl");
  return ExpandTemplate(tmpl, v);
}

}  // namespace gp::launch
