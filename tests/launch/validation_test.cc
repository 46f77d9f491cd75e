// Every launch validation error, word for word: exit 2, one line on stderr, nothing on stdout.
#include <catch2/catch.hpp>

#include "launch/driver_check.h"
#include "launch/resolve.h"
#include "launch/validate.h"
#include "manifest/loader.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"
#include "util/error.h"
#include "util/image_ref.h"

using gp::test::Gpuprep;
using gp::test::kH100x2;
using gp::test::kImage;
using gp::test::Snapshot;

namespace {

// Runs launch against the 2x H100 snapshot (plus `args`) and returns stderr; requires exit 2, no stdout.
std::string Fails(std::vector<std::string> args, const std::string& host = kH100x2) {
  std::vector<std::string> full = {"launch", "--host", host};
  full.insert(full.end(), args.begin(), args.end());
  auto r = Gpuprep(full);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  return r.err;
}

}  // namespace

TEST_CASE("launch validation: GPUs the host lacks", "[launch]") {
  CHECK(Fails({"--image", kImage, "--gpus", "0,3"}) ==
        "gpuprep: error: --gpus: GPU 3 does not exist on the host in " + kH100x2 + " (it has 2: 0, 1)\n");
  CHECK(Fails({"--image", kImage, "--gpus", "device=2"}) ==
        "gpuprep: error: --gpus: GPU 2 does not exist on the host in " + kH100x2 + " (it has 2: 0, 1)\n");
  CHECK(Fails({"--image", kImage, "--gpus", "4"}) ==
        "gpuprep: error: --gpus: 4 GPUs requested, but the host in " + kH100x2 + " has 2\n");
  // "0" is docker's count of zero, not GPU 0: an error rather than a container without GPUs.
  for (const std::string zero : {"0", "00", " 0"}) {
    CHECK(Fails({"--image", kImage, "--gpus", zero}) ==
          "gpuprep: error: --gpus: 0 requests no GPU; for GPU index 0 use --gpus device=0 (or --gpus none "
          "for a "
          "CPU-only container)\n");
  }
  CHECK(
      Fails({"--image", kImage, "--gpus", "0"}, Snapshot("no-runtime.json")) ==  // was a silent success there
      "gpuprep: error: --gpus: 0 requests no GPU; for GPU index 0 use --gpus device=0 (or --gpus none for a "
      "CPU-only container)\n");
  CHECK(Fails({"--image", kImage, "--gpus", "0,0"}) == "gpuprep: error: --gpus: GPU 0 is listed twice\n");
  CHECK(Fails({"--image", kImage, "--gpus", "first"}) ==
        "gpuprep: error: --gpus: expected all, none, a count, a list of indices (0,1) or device=0,1; got "
        "\"first\"\n");
  CHECK(Fails({"--image", kImage, "--gpus", "0,x"}) ==
        "gpuprep: error: --gpus: \"x\" is not a GPU index (expected a list such as 0,1 or device=0,1)\n");
}

TEST_CASE("launch validation: index lists for formats that can only count", "[launch]") {
  for (const std::string f : {"slurm", "k8s"})
    CHECK(Fails({"--image", kImage, "--format", f, "--gpus", "0,1", "--", "python", "t.py"}) ==
          "gpuprep: error: --gpus: the " + f +
              " format can only count GPUs (the scheduler picks them); use --gpus 2 "
              "instead of a list of indices\n");
}

TEST_CASE("launch validation: shm larger than the host's memory, and shm with ipc host", "[launch]") {
  const std::string small = Snapshot("rtx4090-minimal.json");  // 64 GiB of memory
  CHECK(Fails({"--image", kImage, "--shm", "65g"}, small) ==
        "gpuprep: error: --shm: 65 GiB of shm is more than the memory of the host in " + small +
            " (64 GiB)\n");
  CHECK(Fails({"--image", kImage, "--shm", "lots"}) ==
        "gpuprep: error: --shm: expected auto or a size such as 16g or 512m, got \"lots\"\n");
  CHECK(Fails({"--image", kImage, "--shm", "16g", "--ipc", "host"}) ==
        "gpuprep: error: --shm: a size has no effect with --ipc host (the container uses the host's "
        "/dev/shm); use "
        "--ipc private or --shm auto\n");
  CHECK(Fails({"--image", kImage, "--ipc", "shareable"}) ==
        "gpuprep: error: --ipc: expected host or private, got \"shareable\"\n");
}

TEST_CASE("launch validation: a driver too old for the image's CUDA", "[launch]") {
  const std::string old = Snapshot("old-driver.json");  // 525.147.05 on H100s
  CHECK(Fails({"--image", "nvcr.io/nvidia/pytorch:23.08-py3"}, old) ==
        "gpuprep: error: --image: nvcr.io/nvidia/pytorch:23.08-py3 requires NVIDIA driver R535 or later; the "
        "host has "
        "driver 525.147.05\n");
  // Doctor's driver-vs-CUDA rule (verdict::DriverRunsCuda): below 13.1's minimum and outside 13.x's MVC.
  CHECK(Fails({"--image", "nvcr.io/nvidia/pytorch:25.12-py3"}, old) ==
        "gpuprep: error: --image: driver 525.147.05 is too old for nvcr.io/nvidia/pytorch:25.12-py3's CUDA "
        "13.1.0 "
        "(needs >= 590.44.01)\n");
  // The same image on R580 runs under CUDA 13.x minor-version compatibility: a warning, not an error.
  auto mvc = Gpuprep({"launch", "--host", kH100x2, "--image", "nvcr.io/nvidia/pytorch:25.12-py3"});
  CHECK(mvc.code == 0);
  CHECK(mvc.err ==
        "gpuprep: driver 580.65.06 is below nvcr.io/nvidia/pytorch:25.12-py3's CUDA 13.1.0's minimum "
        "590.44.01: it runs under CUDA 13.x minor-version compatibility, without features that need a newer "
        "driver\n");
  // 24.06 requires R545 but lists 525.85 for forward compatibility: on H100s that is a warning...
  auto fc = Gpuprep({"launch", "--host", old, "--image", kImage});
  CHECK(fc.code == 0);
  CHECK(fc.err ==
        "gpuprep: nvcr.io/nvidia/pytorch:24.06-py3 requires NVIDIA driver R545 or later: driver 525.147.05 "
        "runs it only in CUDA forward-compatibility mode (data-center GPUs)\n");
  // ...and an error on anything else.
  const auto& compat = gp::manifest::EmbeddedCompat();
  auto verdict = gp::launch::CheckDriver(gp::launch::ImageCudaFor(kImage, nullptr, compat),
                                         gp::Version::Parse("525.147.05"), /*all_datacenter=*/false, compat);
  CHECK(verdict.kind == gp::launch::DriverVerdict::Kind::kTooOld);
  CHECK(verdict.message ==
        "nvcr.io/nvidia/pytorch:24.06-py3 requires NVIDIA driver R545 or later; driver 525.147.05 "
        "could run it only in forward-compatibility mode, which needs data-center GPUs");
  // Fine for the images it covers:
  auto ok = Gpuprep({"launch", "--host", Snapshot("h100x8-cdi.json"), "--image", kImage});
  CHECK(ok.code == 0);
  // ...but a GeForce card cannot use it (RTX 4090, driver 550.54.15 >= 545: fine for 24.06 itself).
  CHECK(Gpuprep({"launch", "--host", Snapshot("rtx4090-minimal.json"), "--image", kImage}).code == 0);
}

TEST_CASE("launch validation: no NVIDIA runtime and no CDI", "[launch]") {
  const std::string nort = Snapshot("no-runtime.json");
  CHECK(Fails({"--image", kImage}, nort) == "gpuprep: error: --gpus: the host in " + nort +
                                                " has no NVIDIA container runtime and no CDI spec, so "
                                                "containers cannot see its GPUs (fix there: sudo gpuprep "
                                                "apply --yes --only container_toolkit; gpuprep "
                                                "doctor there gives the full install)\n");
  // Slurm (pyxis/enroot) and Kubernetes (device plugin) do not go through the docker runtime.
  CHECK(Gpuprep({"launch", "--host", nort, "--image", kImage, "--format", "k8s"}).code == 0);
  // Without GPUs there is nothing to pass through.
  CHECK(Gpuprep({"launch", "--host", nort, "--image", kImage, "--gpus", "none"}).code == 0);
}

TEST_CASE("launch validation: contradictory multi-node and format options", "[launch]") {
  CHECK(Fails({"--image", kImage, "--nodes", "2", "--node-rank", "0"}) ==
        "gpuprep: error: --nodes: 2 nodes need --master ADDR:PORT (the rank-0 node)\n");
  CHECK(Fails({"--image", kImage, "--nodes", "2", "--master", "10.0.0.1:29500"}) ==
        "gpuprep: error: --nodes: each node runs its own command: give --node-rank (0..1)\n");
  CHECK(Fails({"--image", kImage, "--nodes", "2", "--node-rank", "2", "--master", "10.0.0.1:29500"}) ==
        "gpuprep: error: --node-rank: 2 is not below --nodes 2 (ranks are 0..1)\n");
  CHECK(Fails({"--image", kImage, "--node-rank", "0"}) == "gpuprep: error: --node-rank: needs --nodes\n");
  CHECK(Fails({"--image", kImage, "--master", "10.0.0.1:29500"}) ==
        "gpuprep: error: --master: only meaningful with --nodes 2 or more\n");
  CHECK(Fails({"--image", kImage, "--nodes", "2", "--node-rank", "0", "--master", "10.0.0.1"}) ==
        "gpuprep: error: --master: expected ADDR:PORT (e.g. 10.0.0.1:29500), got \"10.0.0.1\"\n");
  CHECK(Fails({"--image", kImage, "--nodes", "0"}) == "gpuprep: error: --nodes: must be at least 1\n");
  CHECK(Fails({"--image", kImage, "--gpus", "none", "--nodes", "2", "--node-rank", "0", "--master", "h:1"}) ==
        "gpuprep: error: --gpus: none contradicts --nodes 2 (a multi-node GPU job)\n");
  CHECK(Fails({"--image", kImage, "--gpus", "none", "--format", "torchrun", "--", "python", "t.py"}) ==
        "gpuprep: error: --gpus: none leaves torchrun no process to start (--nproc_per_node would be 0)\n");
  CHECK(Fails({"--image", kImage, "--format", "k8s", "--interactive"}) ==
        "gpuprep: error: --interactive: a k8s job has no terminal; drop --interactive\n");
  CHECK(Fails({"--image", kImage, "--format", "k8s", "--nodes", "2"}) ==
        "gpuprep: error: --nodes: 2 nodes need --master ADDR:PORT (the rank-0 node)\n");
  CHECK(Fails({"--image", kImage, "--format", "yaml"}) ==
        "gpuprep: error: --format: unknown format \"yaml\" (formats: docker, json, compose, torchrun, slurm, "
        "k8s)\n");
  CHECK(Fails({"--image", kImage, "--format", "dockr"}) ==
        "gpuprep: error: --format: unknown format \"dockr\" (did you mean \"docker\"?)\n");
  CHECK(Fails({"--image", kImage, "--format", "torchrun"}) ==
        "gpuprep: error: --format: torchrun needs the training command after --, e.g. -- python train.py\n");
  CHECK(Fails({"--image", kImage, "--format", "slurm"}) ==
        "gpuprep: error: --format: slurm needs the training command after --, e.g. -- python train.py\n");
}

TEST_CASE("launch validation: mounts, environment names, workdir, name, image", "[launch]") {
  CHECK(Fails({"--image", kImage, "-e", "1BAD=x"}) ==
        "gpuprep: error: -e: invalid environment variable name \"1BAD\" (letters, digits and _, not starting "
        "with a "
        "digit)\n");
  CHECK(Fails({"--image", kImage, "-e", "NO_VALUE"}) ==
        "gpuprep: error: -e: expected NAME=VALUE, got \"NO_VALUE\"\n");
  CHECK(Fails({"--image", kImage, "-e", "A-B=1"}) ==
        "gpuprep: error: -e: invalid environment variable name \"A-B\" (letters, digits and _, not starting "
        "with a "
        "digit)\n");
  CHECK(Fails({"--image", kImage, "-v", "data:/data"}) ==
        "gpuprep: error: -v: the source must be an absolute host path, got \"data\"\n");
  CHECK(Fails({"--image", kImage, "-v", "/data"}) ==
        "gpuprep: error: -v: expected SRC:DST or SRC:DST:ro, got \"/data\"\n");
  CHECK(Fails({"--image", kImage, "-v", "/data:/d:rx"}) ==
        "gpuprep: error: -v: unknown mount option \"rx\" in \"/data:/d:rx\" (expected ro or rw)\n");
  CHECK(Fails({"--image", kImage, "-v", "/data:d"}) ==
        "gpuprep: error: -v: the target must be an absolute container path, got \"d\"\n");
  CHECK(Fails({"--image", kImage, "--workdir", "work"}) ==
        "gpuprep: error: --workdir: must be an absolute path inside the container, got \"work\"\n");
  CHECK(Fails({"--image", kImage, "--name", "my run"}) ==
        "gpuprep: error: --name: \"my run\" is not a valid name (letters, digits, _ . -, starting with a "
        "letter or "
        "digit)\n");
  CHECK(Fails({"--image", "nvcr.io/x:1 && rm"}) ==
        "gpuprep: error: --image: \"nvcr.io/x:1 && rm\" is not an image reference\n");
  // A leading '-' would make docker read the "image" as an option.
  CHECK(Fails({"--image=--privileged", "--", "ubuntu", "bash"}) ==
        "gpuprep: error: --image: \"--privileged\" is not an image reference\n");
  CHECK(Fails({"--image", "-v/:/host"}) ==
        "gpuprep: error: --image: \"-v/:/host\" is not an image reference\n");
  CHECK(Fails({"--image", "NVCR.io/Nvidia/PyTorch:24.06"}) ==
        "gpuprep: error: --image: \"NVCR.io/Nvidia/PyTorch:24.06\" is not an image reference\n");
  CHECK(Fails({"--image", kImage, "--name=--rm"}) ==
        "gpuprep: error: --name: \"--rm\" is not a valid name (letters, digits, _ . -, starting with a "
        "letter or "
        "digit)\n");
  CHECK(Fails({"--image", kImage, "--name", "a/b"}) ==
        "gpuprep: error: --name: \"a/b\" is not a valid name (letters, digits, _ . -, starting with a letter "
        "or "
        "digit)\n");
  CHECK(Fails({"--image", kImage, "--workdir", "-w"}) ==
        "gpuprep: error: --workdir: must be an absolute path inside the container, got \"-w\"\n");
  CHECK(Fails({"--image", kImage, "--profile", "visoin"}) ==
        "gpuprep: error: --profile: unknown profile \"visoin\" (did you mean \"vision\"?)\n");
  auto r = Gpuprep({"launch", "--host", "/nonexistent/node.json", "--image", kImage});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --host: cannot read /nonexistent/node.json: no such file\n");
}

TEST_CASE("launch validation: a mount source missing on the live host", "[launch]") {
  // Without --host the target is probed; --root makes the probe read a fixture tree (nothing executed).
  const std::string root = std::string(GP_FIXTURES) + "/hosts/healthy-h100";
  auto r = Gpuprep({"launch", "--root", root, "--image", kImage, "-v", "/no/such/dir:/data"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "gpuprep: error: -v: /no/such/dir does not exist on this host (mounted at /data)\n");
  // With --host the files are on another machine: not checked.
  CHECK(Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "-v", "/no/such/dir:/data"}).code == 0);
}

TEST_CASE("launch: --shm auto rule", "[launch]") {
  using gp::launch::AutoShmBytes;
  const uint64_t GiB = 1ULL << 30;
  CHECK(AutoShmBytes(2048 * GiB, 8 * GiB, 8) == 64 * GiB);  // per GPU
  CHECK(AutoShmBytes(64 * GiB, 8 * GiB, 8) == 32 * GiB);    // capped at half the memory
  CHECK(AutoShmBytes(1 * GiB, 8 * GiB, 1) == 1 * GiB);      // never below 1 GiB
  CHECK(AutoShmBytes(0, 8 * GiB, 0) == 8 * GiB);            // unknown memory, no GPU: one GPU's worth
}

TEST_CASE("launch: a DataLoader-heavy profile with a small private shm warns on stderr", "[launch]") {
  auto r = Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "--profile", "vision", "--shm", "1g"});
  CHECK(r.code == 0);
  CHECK(r.out.find("--ipc=private --shm-size=1g") != std::string::npos);
  CHECK(r.err ==
        "gpuprep: --ipc private with 1 GiB of shm for 2 GPU(s) will starve the DataLoader workers of profile "
        "vision; "
        "use --ipc host or --shm auto\n");
}

TEST_CASE("launch: a host without GPUs, --interactive, --json and the command without --", "[launch]") {
  const gp::test::TempDir tmp;
  const std::string empty = tmp.path;  // a --root tree with nothing in it: no GPU at all
  auto r = Gpuprep({"launch", "--root", empty, "--image", kImage});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --gpus: this host has no NVIDIA GPU\n");
  r = Gpuprep({"launch", "--root", empty, "--image", kImage, "--gpus", "none", "--", "python", "prep.py"});
  CHECK(r.code == 0);
  CHECK(r.out.find("--gpus") == std::string::npos);

  r = Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "--interactive", "--", "bash"});
  CHECK(r.out ==
        "docker run --rm -it \\\n  --gpus all \\\n  --ipc=host \\\n  --ulimit memlock=-1 --ulimit "
        "stack=67108864 \\\n"
        "  nvcr.io/nvidia/pytorch:24.06-py3 \\\n  bash\n");
  r = Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "--", "bash"});
  CHECK(r.out.find("-it") == std::string::npos);

  r = Gpuprep({"launch", "--json", "--host", kH100x2, "--image", kImage, "--", "python", "--json", "-v"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["config"]["command"] ==
        nlohmann::json::array({"python", "--json", "-v"}));
  r = Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "python", "train.py"});
  CHECK(r.out.find("  python train.py\n") != std::string::npos);

  r = Gpuprep({"launch", "--host", kH100x2, "--image", kImage, "--format", "slurm", "--shm", "8g", "--",
               "python", "t.py"});
  CHECK(r.code == 0);
  CHECK(r.err ==
        "gpuprep: --shm has no effect in the slurm format: enroot containers share the node's IPC namespace "
        "and /dev/shm\n");
}

TEST_CASE("launch: the image comes from the stack when nothing else names one", "[launch]") {
  // The snapshot's stack is not embedded, so the default for ubuntu 22.04 + hopper is chosen and said.
  auto r = Gpuprep({"launch", "--host", kH100x2, "--gpus", "none", "--", "python", "prep.py"});
  REQUIRE(r.code == 0);
  const auto doc =
      nlohmann::json::parse(Gpuprep({"launch", "--json", "--host", kH100x2, "--gpus", "none"}).out);
  CHECK(doc["origins"]["image"] == "stack");
  CHECK(r.out.find("  " + doc["config"]["image"].get<std::string>() + " \\\n") != std::string::npos);
  CHECK(r.err.find("gpuprep: image from stack " + doc["config"]["stack"].get<std::string>() + ": ") == 0);
  // An explicit --manifest that does not exist is an error, not a silent fallback.
  auto bad = Gpuprep({"launch", "--manifest", "no-such-stack", "--host", kH100x2});
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
}

TEST_CASE("launch validation: values from a profile name --profile", "[launch]") {
  const gp::test::TempDir tmp;
  const std::string dir = tmp.path;
  const std::string path = dir + "/team.yaml";
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f);
  std::fputs(
      "apiVersion: gpuprep/v1\nkind: Profile\nmetadata: {name: team}\nspec:\n  shm: 3t\n"
      "  mounts: [{source: /no/such/team/data, target: /data}]\n",
      f);
  std::fclose(f);
  CHECK(Fails({"--image", kImage, "--profile", path}) ==
        "gpuprep: error: --profile: 3 TiB of shm is more than the memory of the host in " + kH100x2 +
            " (2.0 TiB)\n");
  const std::string root = std::string(GP_FIXTURES) + "/hosts/healthy-h100";
  auto r = Gpuprep({"launch", "--root", root, "--image", kImage, "--profile", path, "--shm", "1g"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: --profile: /no/such/team/data does not exist on this host (mounted at /data)\n");
}

// launch checks --image with the one reference grammar (util/image_ref.h); a profile's image and workdir are
// refused when the profile is read (tests/manifest/image_values_test.cc).
TEST_CASE("launch: image references follow docker's grammar", "[launch]") {
  auto ValidImageReference = [](const std::string& ref) { return gp::ParseImageRef(ref).has_value(); };
  for (const std::string& ok : std::vector<std::string>{
           "ubuntu", "ubuntu:22.04", "nvcr.io/nvidia/pytorch:24.06-py3", "localhost:5000/team/train:v1",
           "a__b/c-d.e_f", "a--b", "registry.example.com:443/x/y@sha256:" + std::string(64, 'a'),
           "nvcr.io/nvidia/pytorch:24.06-py3@sha256:" + std::string(64, '0'), "[::1]:5000/x", "x:_Tag.1-a",
           "Host.Example/x"}) {
    INFO(ok);
    CHECK(ValidImageReference(ok));
  }
  for (const std::string& bad : std::vector<std::string>{"",
                                                         "-x",
                                                         "--privileged",
                                                         "ubuntu bash",
                                                         "Ubuntu",
                                                         "ubuntu:",
                                                         "ubuntu:-tag",
                                                         "a/-b",
                                                         "a/b-",
                                                         "a..b",
                                                         "a___b",
                                                         "a//b",
                                                         "/a",
                                                         "a/",
                                                         "x:" + std::string(129, 't'),
                                                         "x@sha256:abc",
                                                         "x@sha256:" + std::string(64, 'A'),
                                                         "x@md5:" + std::string(32, 'a'),
                                                         "a:b:c",
                                                         "$(id)",
                                                         std::string(256, 'a'),
                                                         "x;y",
                                                         "x\ny"}) {
    INFO(bad);
    CHECK_FALSE(ValidImageReference(bad));
  }
}
