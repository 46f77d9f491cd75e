#include "accept/compose.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace gp::accept {

int PcieGen(double gt) {
  const double speeds[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int i = 0; i < 6; ++i)
    if (std::fabs(gt - speeds[i]) < 0.05) return i + 1;
  return 0;
}

std::vector<std::string> NodesLines(const NodesInfo& nodes, const std::vector<std::string>& nccl_log) {
  using Json = nlohmann::ordered_json;
  auto dump = [](const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); };
  Json env = Json::object();
  for (const auto& [k, v] : nodes.env) env[k] = v;
  Json ports = Json::array();
  for (const NodePort& p : nodes.ports)
    ports.push_back(Json{{"device", p.device},
                         {"port", p.port},
                         {"link_layer", p.link_layer},
                         {"rate_gbps", p.rate_gbps},
                         {"state", p.state}});
  std::vector<std::string> out{dump(Json{{"record", "nodes"},
                                         {"nnodes", nodes.nnodes},
                                         {"node_rank", nodes.node_rank},
                                         {"master", nodes.master},
                                         {"env", env},
                                         {"ports", ports}})};
  for (const std::string& line : nccl_log) out.push_back(dump(Json{{"record", "nccl_log"}, {"line", line}}));
  return out;
}

std::string ComposeRecording(const HostRun& run, const std::vector<HostGpu>& gpus,
                             const std::vector<std::string>& phase_lines) {
  using Json = nlohmann::ordered_json;
  std::string out;
  auto line = [&](const Json& j) { out += j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"; };
  line(Json{{"record", "run"},
            {"schema", 1},
            {"started_at", run.started_at},
            {"finished_at", run.finished_at},
            {"host", run.host},
            {"driver_version", run.driver_version},
            {"stack", run.stack},
            {"topology", run.topology},
            {"cpus", run.cpus},
            {"ram_bytes", run.ram_bytes},
            {"nvme_bytes", run.nvme_bytes},
            {"source", "gpuprep's measurement program"}});
  for (const HostGpu& g : gpus) {
    Json j{{"record", "gpu"},
           {"gpu", g.index},
           {"uuid", g.uuid},
           {"serial", g.serial},
           {"name", g.name},
           {"pci_device_id", g.pci_device_id},
           {"memory_total_mib", g.memory_total_mib},
           {"pcie_max_gen", g.pcie_max_gen},
           {"pcie_max_width", g.pcie_max_width}};
    if (g.upstream_max_gen > 0) j["upstream_max_gen"] = g.upstream_max_gen;
    if (g.nvlink_links_up) j["nvlink_links_up"] = *g.nvlink_links_up;
    if (g.fabric_complete) j["fabric_complete"] = *g.fabric_complete;
    line(j);
  }
  for (const std::string& l : phase_lines) out += l + "\n";
  line(Json{{"record", "end"}});
  return out;
}

}  // namespace gp::accept
