// NVLink links per GPU from the GPU catalogue (compat.yaml's nvlink_links, generated from
// tools/data/gpu-boards.tsv with each count's source), as the peak values `gpuprep accept` checks the links
// up against. A board the catalogue gives no count for is absent: its links are not judged. Pure.
#pragma once
#include <map>
#include <string>

#include "accept/table.h"
#include "manifest/model.h"

namespace gp::accept {

// PCI device id ("0x2330") -> links per GPU (quantity nvlink_links, level peak, unit links, kind quoted, the
// catalogue's source). Entries of one device id that disagree leave the id out (not judged).
std::map<std::string, Value> CatalogueNvlinkLinks(const manifest::Compat& compat);

}  // namespace gp::accept
