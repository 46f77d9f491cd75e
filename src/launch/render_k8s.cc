// A Kubernetes batch/v1 Job: nvidia.com/gpu limits (a count: the device plugin picks the GPUs), /dev/shm
// as a memory-backed emptyDir with the shm size as its sizeLimit, host mounts as hostPath volumes.
#include <cctype>

#include "launch/render.h"
#include "launch/template.h"

namespace gp::launch {
namespace {

// RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, <= 63 chars.
std::string DnsLabel(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpuprep-job" : out;
}

// Kubernetes quantity: "16Gi" / "512Mi" when exact, else bytes.
std::string Quantity(uint64_t bytes) {
  const std::pair<uint64_t, const char*> units[] = {
      {1ULL << 40, "Ti"}, {1ULL << 30, "Gi"}, {1ULL << 20, "Mi"}, {1ULL << 10, "Ki"}};
  for (const auto& [mult, suffix] : units)
    if (bytes >= mult && bytes % mult == 0) return std::to_string(bytes / mult) + suffix;
  return std::to_string(bytes);
}

// The container port of a docker -p value ("8888:8888", "127.0.0.1:80:8080/tcp" -> 8080); 0 if none.
int ContainerPort(const std::string& p) {
  std::string s = p.substr(p.rfind(':') == std::string::npos ? 0 : p.rfind(':') + 1);
  s = s.substr(0, s.find('/'));
  if (s.empty() || s.size() > 5) return 0;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return 0;
  return std::stoi(s);
}

// Kubernetes expands $(VAR) in a container's command, args and env values, and reads "$$" as a literal '$':
// doubling every '$' makes the Job run exactly the validated values.
std::string NoExpand(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '$' ? "$$" : std::string(1, ch);
  return out;
}

// An Indexed Job's pods each carry their completion index in this annotation (Kubernetes' Job documentation,
// "Completion mode").
constexpr const char* kCompletionIndex = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

// Several nodes: an Indexed Job with one pod per node, on the node's network (NCCL and the rendezvous reach
// the other nodes directly; ClusterFirstWithHostNet keeps cluster DNS), the RDMA resource and IPC_LOCK.
void MultiNodeParts(const RunConfig& c, std::map<std::string, std::string>& v) {
  const bool multi = c.multi.nodes > 1;
  const std::string n = std::to_string(c.multi.nodes);
  v["multi_note"] = multi
                        ? "# " + n +
                              " nodes: an Indexed Job, one pod per node on the node's network; NODE_RANK is "
                              "each pod's completion index.\n# The pod with index 0 must run on the node at "
                              "MASTER_ADDR (pin it, e.g. with a nodeSelector on kubernetes.io/hostname)."
                        : "";
  v["indexed"] = multi ? "completions: " + n + "\nparallelism: " + n + "\ncompletionMode: Indexed" : "";
  v["host_network"] = c.network == "host" ? "hostNetwork: true\ndnsPolicy: ClusterFirstWithHostNet" : "";
  std::string caps;
  for (const std::string& cap : c.cap_add) caps += (caps.empty() ? "" : ", ") + YamlQuote(cap);
  v["security"] = caps.empty() ? "" : "securityContext:\n  capabilities:\n    add: [" + caps + "]";
  v["rdma_limit"] = c.rdma_resource.empty() ? "" : c.rdma_resource + ": " + std::to_string(c.rdma_count);
}

}  // namespace

std::string RenderK8s(const RunConfig& c) {
  std::map<std::string, std::string> v;
  v["comment"] = c.profile.empty() ? "" : " (profile " + c.profile + ")";
  v["name"] = YamlQuote(DnsLabel(!c.name.empty()      ? c.name
                                 : !c.profile.empty() ? "gpuprep-" + c.profile
                                                      : "gpuprep-job"));
  v["container"] = YamlQuote("train");
  v["image"] = YamlQuote(c.image);
  std::string args;
  for (const std::string& a : c.command) args += (args.empty() ? "" : ", ") + YamlQuote(NoExpand(a));
  // `args` replaces the image's CMD and keeps its ENTRYPOINT, as docker run's trailing command does.
  v["command"] = c.command.empty() ? "" : "args: [" + args + "]";
  v["working_dir"] = c.workdir.empty() ? "" : "workingDir: " + YamlQuote(c.workdir);
  std::string env;
  for (const auto& [k, val] : c.env) {
    env += "\n  - name: " + YamlQuote(k);
    if (k == "NODE_RANK" && c.multi.rank_from_index)
      env += "\n    valueFrom:\n      fieldRef:\n        fieldPath: " + YamlQuote(kCompletionIndex);
    else
      env += "\n    value: " + YamlQuote(NoExpand(val));
  }
  v["env"] = env.empty() ? "" : "env:" + env;
  MultiNodeParts(c, v);
  std::string ports;
  for (const std::string& p : c.ports)
    if (int port = ContainerPort(p)) ports += "\n  - containerPort: " + std::to_string(port);
  v["ports"] = ports.empty() ? "" : "ports:" + ports;
  const int n = c.gpus.Number();
  v["gpu_limit"] = "nvidia.com/gpu: " + std::to_string(n);
  v["shm_limit"] = YamlQuote(Quantity(c.shm_bytes ? *c.shm_bytes : c.auto_shm_bytes));
  std::string mounts, vols;
  for (size_t i = 0; i < c.mounts.size(); ++i) {
    const Mount& m = c.mounts[i];
    const std::string name = "mount-" + std::to_string(i);
    mounts += "- name: " + name + "\n  mountPath: " + YamlQuote(m.target) +
              (m.read_only ? "\n  readOnly: true" : "") + "\n";
    vols += "- name: " + name + "\n  hostPath:\n    path: " + YamlQuote(m.source) + "\n";
  }
  if (!mounts.empty()) mounts.pop_back(), vols.pop_back();
  v["volume_mounts"] = mounts;
  v["volumes"] = vols;
  return ExpandTemplate(EmbeddedTemplate("k8s-job.yaml.tmpl"), v);
}

}  // namespace gp::launch
