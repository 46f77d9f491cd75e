#include <nlohmann/json.hpp>

#include "fleet/render.h"

namespace gp::fleet {

std::string RenderJson(const Report& r) {
  using nlohmann::ordered_json;
  ordered_json hosts = ordered_json::array();
  for (const auto& h : r.hosts) {
    ordered_json gpus = ordered_json::array();
    for (const auto& g : h.gpus)
      gpus.push_back({{"pci", g.pci},
                      {"name", g.name},
                      {"uuid", g.uuid.empty() ? ordered_json(nullptr) : ordered_json(g.uuid)},
                      {"serial", g.serial.empty() ? ordered_json(nullptr) : ordered_json(g.serial)}});
    ordered_json layers = ordered_json::object();
    for (const auto& l : r.layers) {
      auto it = h.layers.find(l);
      layers[l] = it == h.layers.end() ? ordered_json(nullptr) : ordered_json(it->second);
    }
    ordered_json codes = ordered_json::array();
    for (const auto& f : h.findings) codes.push_back(f.code);
    hosts.push_back(
        {{"label", h.label},
         {"file", h.file},
         {"hostname", h.hostname.empty() ? ordered_json(nullptr) : ordered_json(h.hostname)},
         {"machine_id", h.machine_id.empty() ? ordered_json(nullptr) : ordered_json(h.machine_id)},
         {"os", h.os},
         {"manifest", h.manifest},
         {"status", h.worst},
         {"gpus", gpus},
         {"layers", layers},
         {"findings", codes}});
  }
  ordered_json groups = ordered_json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"code", g.code},
                      {"layer", g.layer},
                      {"status", g.status},
                      {"hosts", g.hosts},
                      {"messages", g.messages},
                      {"fixes", g.fixes}});
  ordered_json doc;
  doc["gpuprep"] = GPUPREP_VERSION;
  doc["summary"] = {{"hosts", r.hosts.size()}, {"failing", r.failing}, {"warning", r.warning}, {"ok", r.ok}};
  doc["layers"] = r.layers;
  doc["hosts"] = hosts;
  doc["findings"] = groups;
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace gp::fleet
