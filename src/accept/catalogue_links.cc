#include "accept/catalogue_links.h"

#include <set>

namespace gp::accept {

std::map<std::string, Value> CatalogueNvlinkLinks(const manifest::Compat& compat) {
  std::map<std::string, Value> out;
  std::set<std::string> disagree;
  for (const auto& g : compat.gpus) {
    if (g.nvlink_links <= 0) continue;
    for (const auto& id : g.pci_ids) {
      Value v;
      v.device = id;
      v.quantity = "nvlink_links";
      v.level = "peak";
      v.value = g.nvlink_links;
      v.text = std::to_string(g.nvlink_links);
      v.unit = "links";
      v.kind = "quoted";
      v.source = g.nvlink_links_source;
      auto [it, added] = out.emplace(id, v);
      if (!added && it->second.value != v.value) disagree.insert(id);
    }
  }
  for (const auto& id : disagree) out.erase(id);
  return out;
}

}  // namespace gp::accept
