// Which job a GPU process belongs to, from the text of its /proc/PID/cgroup (proc(5), cgroups(7): one
// "hierarchy-ID:controller-list:cgroup-path" line per hierarchy; "0::PATH" is the v2 unified one). Pure:
// the text comes from a live /proc or a fixture tree and is hostile until parsed. The shapes recognised,
// first match wins, v2 path first, then the v1 paths in file order:
//  - Slurm: v1 "/slurm/uid_U/job_J/step_S/task_T" (slurm.schedmd.com/cgroups.html, "slurm_<node>" with
//    several slurmd per node), v2 "/system.slice/slurmstepd.scope/job_J/step_S/user/task_T"
//    (slurm.schedmd.com/cgroup_v2.html; "<node>_slurmstepd.scope" with several slurmd). The job id comes
//    from the path only: SLURM_JOB_ID is in the job's environment, which another user cannot read.
//  - Kubernetes pods: the kubelet names a pod's cgroup "pod" + its UID (kubernetes/kubernetes,
//    pkg/kubelet/cm/pod_container_manager_linux.go, podCgroupNamePrefix); with the systemd cgroup driver
//    as a slice "kubepods-<qos>-pod<uid>.slice" with the UID's '-' written '_'
//    (pkg/kubelet/cm/cgroup_manager_linux.go, escapeSystemdCgroupName), with the cgroupfs driver as
//    "/kubepods/<qos>/pod<uid>/<container id>" (kubernetes.io/docs/setup/production-environment/
//    container-runtimes/, "cgroup drivers"). Every container of a pod is the pod's job.
//  - Containers outside Kubernetes: runc's systemd driver names a container's scope
//    "<ScopePrefix>-<id>.scope" (opencontainers/runc, libcontainer/cgroups/systemd, getUnitName): docker
//    ("docker-"), containerd's CRI ("cri-containerd-"), CRI-O ("crio-"), podman ("libpod-"); their
//    conmon scopes ("crio-conmon-", "libpod-conmon-") are not the container. With the cgroupfs driver
//    docker uses "/docker/<id>" (dockerd's default cgroup parent) and podman "/libpod_parent/libpod-<id>".
//    Container ids are 64 lowercase hex digits.
//  - systemd: the deepest unit in the path ending in ".service" or ".scope" ("user@1000.service",
//    "session-3.scope", "jupyter.service"), whose name is of systemd's unit-name characters
//    (systemd.unit(5): ASCII letters, digits, ":-_.\\", '@' for instances, at most 255).
//  - otherwise the cgroup path itself (kind "cgroup"), "/" for the root cgroup.
#pragma once
#include <string>
#include <string_view>

#include "watch/sample.h"

namespace gp::watch {

// Longest cgroup path kept (longer ones are cut and marked "..."), and the longest file read.
inline constexpr size_t kMaxJobPathBytes = 512;
inline constexpr size_t kMaxProcCgroupBytes = 16384;

// The job named by a /proc/PID/cgroup text. Text with no valid line gives kind "unknown" with a reason.
Job JobFromProcCgroup(std::string_view text);

// A job whose cgroup could not be read: kind "unknown", `reason` as given.
Job UnknownJob(const std::string& reason);

// Whether a job read back from a recording is one JobFromProcCgroup or UnknownJob could have made: a known
// kind, bounded strings without control characters or ill-formed UTF-8, an id of its kind's shape. An
// empty string when it is; else what is wrong.
std::string CheckJob(const Job& j);

// One short, terminal-safe phrase for the text output: "slurm job 42", "docker 0123456789ab" (container
// ids cut to 12 digits, as docker prints them), "kubernetes pod <uid>", "systemd jupyter.service",
// "cgroup /a/b", "unknown (reason)".
std::string JobLabel(const Job& j);

}  // namespace gp::watch
