// compose and k8s output parse back (yaml-cpp) to the run config; the sbatch script runs under bash with
// stand-in srun/scontrol that record their argv; json reports origins.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "launch/template.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"
#include "sys/process.h"

using gp::test::Gpuprep;
using gp::test::kH100x2;
using gp::test::kImage;
using gp::test::Snapshot;
using nlohmann::json;

namespace {

const std::string kAwkward = "a b 'q' \"dq\" $HOME \\x: #not-a-comment";

std::string Out(std::vector<std::string> args) {
  auto r = Gpuprep(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

std::vector<std::string> Strings(const YAML::Node& n) {
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(e.as<std::string>());
  return out;
}

// Compose and Kubernetes read "$$" as a literal '$'.
std::string Unescape(std::string s) {
  for (size_t i = s.find("$$"); i != std::string::npos; i = s.find("$$", i + 1)) s.erase(i, 1);
  return s;
}

}  // namespace

TEST_CASE("launch compose: parses back to the run config", "[launch]") {
  const std::vector<std::string> flags = {"--host",    kH100x2,
                                          "--image",   kImage,
                                          "--gpus",    "0,1",
                                          "--ipc",     "private",
                                          "--shm",     "24g",
                                          "-v",        "/data/my set:/data:ro",
                                          "-e",        "NOTE=" + kAwkward,
                                          "--workdir", "/workspace",
                                          "--name",    "trainer",
                                          "--",        "python",
                                          "train.py",  "--tag",
                                          kAwkward};
  std::vector<std::string> args = {"launch", "--format", "compose"};
  args.insert(args.end(), flags.begin(), flags.end());
  YAML::Node doc = YAML::Load(Out(args));
  YAML::Node s = doc["services"]["trainer"];
  REQUIRE(s.IsMap());
  CHECK(s["image"].as<std::string>() == kImage);
  CHECK(s["container_name"].as<std::string>() == "trainer");
  CHECK(s["ipc"].as<std::string>() == "private");
  CHECK(s["shm_size"].as<uint64_t>() == 24ULL << 30);
  CHECK(s["ulimits"]["memlock"].as<int64_t>() == -1);
  CHECK(s["ulimits"]["stack"].as<int64_t>() == 67108864);
  YAML::Node dev = s["deploy"]["resources"]["reservations"]["devices"][0];
  CHECK(dev["driver"].as<std::string>() == "nvidia");
  CHECK(Strings(dev["device_ids"]) == std::vector<std::string>{"0", "1"});
  CHECK(!dev["count"]);
  CHECK(Strings(dev["capabilities"]) == std::vector<std::string>{"gpu"});
  CHECK(s["volumes"][0]["type"].as<std::string>() == "bind");
  CHECK(s["volumes"][0]["source"].as<std::string>() == "/data/my set");
  CHECK(s["volumes"][0]["target"].as<std::string>() == "/data");
  CHECK(s["volumes"][0]["read_only"].as<bool>());
  CHECK(Unescape(s["environment"]["NOTE"].as<std::string>()) == kAwkward);
  CHECK(s["environment"]["NOTE"].as<std::string>().find("$$HOME") != std::string::npos);
  CHECK(s["working_dir"].as<std::string>() == "/workspace");
  std::vector<std::string> cmd = Strings(s["command"]);
  for (auto& c : cmd) c = Unescape(c);
  CHECK(cmd == std::vector<std::string>{"python", "train.py", "--tag", kAwkward});
  CHECK(!s["stdin_open"]);

  // count / all / CDI
  YAML::Node all = YAML::Load(Out({"launch", "--format", "compose", "--host", kH100x2, "--image", kImage}));
  YAML::Node d = all["services"]["train"]["deploy"]["resources"]["reservations"]["devices"][0];
  CHECK(d["count"].as<std::string>() == "all");
  CHECK(!all["services"]["train"]["shm_size"]);
  CHECK(all["services"]["train"]["ipc"].as<std::string>() == "host");
  YAML::Node cdi = YAML::Load(Out({"launch", "--format", "compose", "--host", Snapshot("h100x8-cdi.json"),
                                   "--image", kImage, "--gpus", "2", "--interactive"}));
  CHECK(Strings(cdi["services"]["train"]["devices"]) ==
        std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=1"});
  CHECK(!cdi["services"]["train"]["deploy"]);
  CHECK(cdi["services"]["train"]["tty"].as<bool>());
}

TEST_CASE("launch k8s: a Job with nvidia.com/gpu limits and a memory-backed /dev/shm", "[launch]") {
  YAML::Node job = YAML::Load(Out({"launch",
                                   "--format",
                                   "k8s",
                                   "--host",
                                   kH100x2,
                                   "--image",
                                   kImage,
                                   "--gpus",
                                   "2",
                                   "--profile",
                                   "multimodal",
                                   "-v",
                                   "/mnt/data:/data:ro",
                                   "-e",
                                   "NOTE=" + kAwkward,
                                   "-e",
                                   "OUT=$(HOME)/out",
                                   "--name",
                                   "MM_Run.1",
                                   "--",
                                   "python",
                                   "train.py",
                                   kAwkward,
                                   "--out=$(HOME)/$$"}));
  CHECK(job["apiVersion"].as<std::string>() == "batch/v1");
  CHECK(job["kind"].as<std::string>() == "Job");
  CHECK(job["metadata"]["name"].as<std::string>() == "mm-run-1");
  YAML::Node pod = job["spec"]["template"]["spec"];
  CHECK(pod["restartPolicy"].as<std::string>() == "Never");
  YAML::Node c = pod["containers"][0];
  CHECK(c["image"].as<std::string>() == kImage);
  // Every '$' is doubled, so Kubernetes' $(VAR) expansion leaves the validated values as they are.
  std::vector<std::string> args = Strings(c["args"]);
  CHECK(args[3] == "--out=$$(HOME)/$$$$");
  for (auto& a : args) a = Unescape(a);
  CHECK(args == std::vector<std::string>{"python", "train.py", kAwkward, "--out=$(HOME)/$$"});
  CHECK(c["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 2);
  CHECK(c["workingDir"].as<std::string>() == "/workspace");
  CHECK(c["ports"][0]["containerPort"].as<int>() == 8888);
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"]) env[e["name"].as<std::string>()] = e["value"].as<std::string>();
  CHECK(env["OUT"] == "$$(HOME)/out");
  CHECK(env["NOTE"].find("$$HOME") != std::string::npos);
  for (auto& [k, val] : env) val = Unescape(val);
  CHECK(env == std::map<std::string, std::string>{{"NOTE", kAwkward},
                                                  {"OUT", "$(HOME)/out"},
                                                  {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
                                                  {"TOKENIZERS_PARALLELISM", "false"}});
  CHECK(c["volumeMounts"][0]["name"].as<std::string>() == "dshm");
  CHECK(c["volumeMounts"][0]["mountPath"].as<std::string>() == "/dev/shm");
  CHECK(c["volumeMounts"][1]["mountPath"].as<std::string>() == "/data");
  CHECK(c["volumeMounts"][1]["readOnly"].as<bool>());
  YAML::Node vols = pod["volumes"];
  CHECK(vols[0]["emptyDir"]["medium"].as<std::string>() == "Memory");
  // ipc host has no k8s equivalent here: the emptyDir gets the --shm auto size, 16 GiB x 2 GPUs.
  CHECK(vols[0]["emptyDir"]["sizeLimit"].as<std::string>() == "32Gi");
  CHECK(vols[1]["name"].as<std::string>() == c["volumeMounts"][1]["name"].as<std::string>());
  CHECK(vols[1]["hostPath"]["path"].as<std::string>() == "/mnt/data");

  YAML::Node sized =
      YAML::Load(Out({"launch", "--format", "k8s", "--host", kH100x2, "--image", kImage, "--shm", "512m"}));
  CHECK(sized["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"].as<std::string>() ==
        "512Mi");
  CHECK(
      sized["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() ==
      2);
}

TEST_CASE("launch slurm: the sbatch script runs srun with pyxis and a torchrun rendezvous", "[launch]") {
  const std::string script = Out({"launch",
                                  "--format",
                                  "slurm",
                                  "--host",
                                  kH100x2,
                                  "--image",
                                  kImage,
                                  "--nodes",
                                  "4",
                                  "--gpus",
                                  "2",
                                  "-v",
                                  "/lustre/data:/data:ro",
                                  "-e",
                                  "NOTE=" + kAwkward,
                                  "--workdir",
                                  "/workspace",
                                  "--name",
                                  "big-run",
                                  "--",
                                  "python",
                                  "train.py",
                                  "--tag",
                                  kAwkward});
  CHECK(script.find("#SBATCH --nodes=4\n") != std::string::npos);
  CHECK(script.find("#SBATCH --gpus-per-node=2\n") != std::string::npos);
  CHECK(script.find("#SBATCH --job-name=big-run\n") != std::string::npos);

  // Run it: stand-in scontrol and srun record what the script would hand to Slurm.
  const gp::test::TempDir tmp;
  const std::string dir = tmp.path;
  std::ofstream(dir + "/job.sbatch") << script;
  std::ofstream(dir + "/srun") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > " << dir
                               << "/srun.argv\nenv > " << dir << "/srun.env\n";
  std::ofstream(dir + "/scontrol") << "#!/bin/sh\nprintf 'gpu-node-07\\ngpu-node-08\\n'\n";
  gp::sys::RealCommandRunner runner;
  gp::sys::Command chmod;
  chmod.argv = {"chmod", "+x", dir + "/srun", dir + "/scontrol"};
  REQUIRE(runner.Run(chmod).ok());
  gp::sys::Command run;
  run.argv = {"bash", dir + "/job.sbatch"};
  run.env = {{"PATH", dir + ":/usr/bin:/bin"},
             {"SLURM_JOB_NODELIST", "gpu-node-[07-10]"},
             {"SLURM_NNODES", "4"},
             {"SLURM_JOB_ID", "4242"}};
  auto r = runner.Run(run);
  INFO(r.err);
  REQUIRE(r.ok());
  std::ifstream in(dir + "/srun.argv");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> argv;
  for (size_t start = 0, nul; (nul = all.find('\0', start)) != std::string::npos; start = nul + 1)
    argv.push_back(all.substr(start, nul - start));
  CHECK(argv == std::vector<std::string>{
                    "--container-image=nvcr.io#nvidia/pytorch:24.06-py3",
                    "--container-mounts=/lustre/data:/data:ro", "--container-workdir=/workspace",
                    "--container-env=NOTE,NCCL_SOCKET_IFNAME,NCCL_NET", "torchrun", "--nproc_per_node=2",
                    "--nnodes=4", "--rdzv_backend=c10d", "--rdzv_endpoint=gpu-node-07:29500",
                    "--rdzv_id=4242", "train.py", "--tag", kAwkward});
  std::ifstream envf(dir + "/srun.env");
  std::string env((std::istreambuf_iterator<char>(envf)), std::istreambuf_iterator<char>());
  CHECK(env.find("NOTE=" + kAwkward + "\n") != std::string::npos);
  CHECK(env.find("MASTER_ADDR=gpu-node-07\n") != std::string::npos);
  CHECK(env.find("NCCL_SOCKET_IFNAME=^docker,lo\n") != std::string::npos);  // no RDMA: sockets, pinned
  CHECK(env.find("NCCL_NET=Socket\n") != std::string::npos);

  // A python option torchrun has no spelling for: --no-python after the rendezvous options, python kept.
  const std::string opt = Out({"launch", "--format", "slurm", "--host", kH100x2, "--image", kImage, "--",
                               "python", "-W", "ignore", "train.py"});
  CHECK(opt.find(" --rdzv_id=\"$SLURM_JOB_ID\" \\\n  --no-python python -W ignore train.py\n") !=
        std::string::npos);
}

TEST_CASE("launch json: values and where each came from", "[launch]") {
  json doc = json::parse(Out({"launch", "--json", "--host", kH100x2, "--profile", "llm-finetune", "--image",
                              kImage, "--gpus", "none", "-e", "NCCL_DEBUG=INFO", "--", "python", "prep.py"}));
  const json& o = doc["origins"];
  CHECK(o["image"] == "flag");
  CHECK(o["gpus"] == "flag");
  CHECK(o["ipc"] == "profile");
  CHECK(o["ulimits"] == "stack");
  CHECK(o["workdir"] == "profile");
  CHECK(o["env.NCCL_DEBUG"] == "flag");
  CHECK(o["env.PYTORCH_CUDA_ALLOC_CONF"] == "profile");
  CHECK(doc["config"]["profile"] == "llm-finetune");
  CHECK(doc["config"]["env"][1] == json({{"name", "NCCL_DEBUG"}, {"value", "INFO"}}));
  CHECK(doc["docker_argv"] ==
        json::array({"docker", "run", "--rm", "--ipc=host", "--ulimit", "memlock=-1", "--ulimit",
                     "stack=67108864", "-e", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "-e",
                     "NCCL_DEBUG=INFO", "-e", "TOKENIZERS_PARALLELISM=false", "-w", "/workspace", kImage,
                     "python", "prep.py"}));
  // The shm size of a private IPC namespace comes from the host (the --shm auto rule).
  json priv = json::parse(
      Out({"launch", "--format", "json", "--host", kH100x2, "--image", kImage, "--ipc", "private"}));
  CHECK(priv["origins"]["shm"] == "host");
  CHECK(priv["origins"]["ipc"] == "flag");
  CHECK(priv["origins"]["access"] == "host");
  CHECK(priv["config"]["shm_bytes"] == 16ULL << 30);
}

TEST_CASE("launch templates: placeholders, blocks and YAML quoting", "[launch]") {
  using gp::launch::ExpandTemplate;
  CHECK(ExpandTemplate("a: {{x}}\n  {{block}}\nb: 1\n", {{"x", "\"v\""}, {"block", "k: 1\nl: 2"}}) ==
        "a: \"v\"\n  k: 1\n  l: 2\nb: 1\n");
  CHECK(ExpandTemplate("a: 1\n    {{empty}}\nb: 2\n", {{"empty", ""}}) == "a: 1\nb: 2\n");
  CHECK_THROWS_AS(ExpandTemplate("{{missing}}\n", {}), std::logic_error);
  CHECK(gp::launch::YamlQuote("it's \"x\"\n\\") == "\"it's \\\"x\\\"\\n\\\\\"");
}

TEST_CASE("launch torchrun: --image none prints the bare torchrun line", "[launch]") {
  CHECK(Out({"launch", "--format", "torchrun", "--image", "none", "--host", kH100x2, "--nodes", "2",
             "--node-rank", "1", "--master", "10.1.2.3:29400", "--", "python", "train.py", "--data",
             "/my data"}) ==
        "torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 --master_addr=10.1.2.3 --master_port=29400 "
        "train.py "
        "--data '/my data'\n");
  // No container, so a host without the container toolkit is fine.
  CHECK(Out({"launch", "--format", "torchrun", "--image", "none", "--host", Snapshot("no-runtime.json"),
             "--gpus", "1", "--", "python", "t.py"}) == "torchrun --nproc_per_node=1 t.py\n");
  auto r = Gpuprep({"launch", "--image", "none", "--host", kH100x2});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: --image: none (no container) is only for --format torchrun, which then prints the "
        "bare torchrun line\n");
}

TEST_CASE("launch slurm: --master replaces the first node of the allocation", "[launch]") {
  const std::string s = Out({"launch", "--format", "slurm", "--host", kH100x2, "--image", kImage, "--nodes",
                             "2", "--master", "10.0.0.5:29400", "--", "python", "t.py"});
  CHECK(s.find("\nMASTER_ADDR=10.0.0.5\nMASTER_PORT=29400\n") != std::string::npos);
  CHECK(s.find("scontrol") == std::string::npos);
  CHECK(s.find("#SBATCH --gpus-per-node=2\n") != std::string::npos);  // --gpus all: the host's 2
}
