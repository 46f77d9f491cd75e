// A GPU process's job from /proc/PID/cgroup: the shapes Slurm, the kubelet, runc's drivers and systemd
// write (v1, v2, hybrid; systemd and cgroupfs drivers), and hostile text.
#include "watch/job.h"

#include <catch2/catch.hpp>

using namespace gp;

namespace {

const std::string kId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string Key(const std::string& text) { return watch::JobFromProcCgroup(text).Key(); }

}  // namespace

TEST_CASE("job: Slurm jobs in cgroup v1 and v2 forms", "[watch][job]") {
  // cgroup/v1 plugin: every controller's hierarchy has slurm/uid_U/job_J/step_S/task_T.
  const std::string v1 =
      "12:freezer:/slurm/uid_2101171/job_280678/step_interactive\n"
      "10:devices:/slurm/uid_2101171/job_280678/step_interactive/task_0\n"
      "4:cpu,cpuacct:/slurm/uid_2101171/job_280678/step_interactive/task_0\n"
      "1:name=systemd:/system.slice/slurmd.service\n";
  auto j = watch::JobFromProcCgroup(v1);
  CHECK(j.kind == "slurm");
  CHECK(j.id == "280678");
  CHECK(j.cgroup == "/slurm/uid_2101171/job_280678/step_interactive");
  // Several slurmd per node: slurm_<node>.
  CHECK(Key("5:memory:/slurm_node7/uid_1000/job_42/step_0/task_1\n") == "slurm:42");
  // cgroup/v2 plugin: slurmstepd.scope, or <node>_slurmstepd.scope.
  CHECK(Key("0::/system.slice/slurmstepd.scope/job_1392969/step_0/user/task_0\n") == "slurm:1392969");
  CHECK(Key("0::/system.slice/gpu07_slurmstepd.scope/job_7/step_batch/user/task_special\n") == "slurm:7");
  CHECK(Key("0::/system.slice/slurmstepd.scope/job_42/step_extern/user\n") == "slurm:42");
  // slurmstepd's own cgroup is no job: the deepest unit.
  CHECK(Key("0::/system.slice/slurmstepd.scope/system\n") == "systemd:slurmstepd.scope");
  // A job id that is not a number, or too long, is no Slurm job.
  CHECK(Key("0::/system.slice/slurmstepd.scope/job_4x/step_0\n") == "systemd:slurmstepd.scope");
  CHECK(watch::JobFromProcCgroup("3:cpu:/slurm/uid_1/job_12345678901/step_0\n").kind == "cgroup");
}

TEST_CASE("job: Kubernetes pods under the systemd and cgroupfs drivers", "[watch][job]") {
  const std::string uid = "0b7632a2-a56e-4278-987a-22de18008dbe";
  // systemd driver: the UID's dashes are underscores in the slice name; the container is a runc scope.
  CHECK(Key("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0b7632a2_a56e_4278_987a_"
            "22de18008dbe.slice/cri-containerd-" +
            kId + ".scope\n") == "kubernetes_pod:" + uid);
  CHECK(Key("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0b7632a2_a56e_4278_987a_"
            "22de18008dbe.slice/crio-" +
            kId + ".scope\n") == "kubernetes_pod:" + uid);
  // Guaranteed pods hang off kubepods.slice directly.
  CHECK(Key("0::/kubepods.slice/kubepods-pod0b7632a2_a56e_4278_987a_22de18008dbe.slice/cri-containerd-" +
            kId + ".scope\n") == "kubernetes_pod:" + uid);
  // cgroupfs driver, cgroup v1 hybrid: /kubepods/<qos>/pod<uid>/<container id>, the v2 line at the root.
  CHECK(Key("11:memory:/kubepods/burstable/pod" + uid + "/" + kId + "\n0::/\n") == "kubernetes_pod:" + uid);
  CHECK(Key("11:memory:/kubepods/pod" + uid + "/" + kId + "\n") == "kubernetes_pod:" + uid);
  // "pod" outside kubepods, or a malformed UID, is not a pod.
  CHECK(Key("0::/system.slice/pod" + uid + "\n") == "cgroup:/system.slice/pod" + uid);
  CHECK(Key("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podzzzz.slice\n") ==
        "cgroup:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podzzzz.slice");
}

TEST_CASE("job: containers outside Kubernetes, by runtime and driver", "[watch][job]") {
  CHECK(Key("0::/system.slice/docker-" + kId + ".scope\n") == "docker:" + kId);
  CHECK(Key("12:pids:/docker/" + kId + "\n4:cpu,cpuacct:/docker/" + kId + "\n0::/\n") == "docker:" + kId);
  CHECK(Key("0::/system.slice/cri-containerd-" + kId + ".scope\n") == "containerd:" + kId);
  CHECK(Key("0::/machine.slice/libpod-" + kId + ".scope/container\n") == "podman:" + kId);
  CHECK(Key("3:memory:/libpod_parent/libpod-" + kId + "\n") == "podman:" + kId);
  // conmon's scope is the runtime's monitor, not the container.
  CHECK(Key("0::/machine.slice/libpod-conmon-" + kId + ".scope\n") ==
        "systemd:libpod-conmon-" + kId + ".scope");
  // A short or upper-case id is not a container id.
  CHECK(Key("0::/system.slice/docker-abc123.scope\n") == "systemd:docker-abc123.scope");
  CHECK(watch::JobLabel(watch::JobFromProcCgroup("0::/system.slice/docker-" + kId + ".scope\n")) ==
        "docker 0123456789ab");
}

TEST_CASE("job: systemd units, the cgroup path, the root", "[watch][job]") {
  CHECK(Key("0::/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter.service\n") ==
        "systemd:jupyter.service");
  CHECK(Key("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n") == "systemd:init.scope");
  CHECK(Key("0::/user.slice/user-1000.slice/session-3.scope\n") == "systemd:session-3.scope");
  CHECK(Key("0::/system.slice/train.service\n") == "systemd:train.service");
  // Hybrid: the v2 line at the root, name=systemd holding the unit.
  CHECK(Key("9:name=systemd:/system.slice/train.service\n4:memory:/\n0::/\n") == "systemd:train.service");
  // No unit: the path itself; every hierarchy at the root: "/".
  CHECK(Key("0::/batch/team-a/run7\n") == "cgroup:/batch/team-a/run7");
  CHECK(Key("9:name=systemd:/\n8:pids:/\n0::/\n") == "cgroup:/");
  auto j = watch::JobFromProcCgroup("4:memory:/process_api/ef26d3354c8df6253c530a27d7fa9ec9\n0::/\n");
  CHECK(j.Key() == "cgroup:/process_api/ef26d3354c8df6253c530a27d7fa9ec9");
  CHECK(watch::CheckJob(j).empty());
}

TEST_CASE("job: hostile text stays bounded and printable", "[watch][job]") {
  // No valid line: unknown, with the reason.
  for (const std::string& bad :
       {std::string(), std::string("garbage"), std::string("x::/a\n"), std::string("0::relative\n")}) {
    auto j = watch::JobFromProcCgroup(bad);
    CHECK(j.kind == "unknown");
    CHECK(j.reason == "no cgroup line in /proc/PID/cgroup");
    CHECK(watch::CheckJob(j).empty());
  }
  // Control characters and ill-formed UTF-8 in a cgroup name are written visibly.
  auto j = watch::JobFromProcCgroup(std::string("0::/evil\x1b[2J\xff/x\n"));
  CHECK(j.kind == "cgroup");
  CHECK(j.id == "/evil\\e[2J\\xFF/x");
  CHECK(watch::CheckJob(j).empty());
  // A unit name with characters systemd does not allow is no unit.
  CHECK(Key("0::/system.slice/a b.service\n") == "cgroup:/system.slice/a b.service");
  // A path longer than kept is cut and marked; one past PATH_MAX is no kernel's.
  const std::string long_path = "/" + std::string(1000, 'a');
  auto cut = watch::JobFromProcCgroup("0::" + long_path + "\n");
  CHECK(cut.id.size() == watch::kMaxJobPathBytes + 3);
  CHECK(cut.id.substr(cut.id.size() - 3) == "...");
  CHECK(watch::CheckJob(cut).empty());
  CHECK(watch::JobFromProcCgroup("0::/" + std::string(5000, 'a') + "\n").kind == "unknown");
  // CheckJob refuses what the parser never makes.
  watch::Job forged{"slurm", "12; rm -rf /", "/slurm", ""};
  CHECK(watch::CheckJob(forged) == "id: not a Slurm job id");
  forged = {"docker", kId, "/docker/x\n", ""};
  CHECK(!watch::CheckJob(forged).empty());
  forged = {"none", "", "", ""};
  CHECK(!watch::CheckJob(forged).empty());
  forged = {"unknown", "", "", ""};
  CHECK(watch::CheckJob(forged) == "unknown: an id, or no reason");
}
