// BoardOf and HostSpecOf (host_spec.h).
#include "layers/host_spec.h"

namespace gp::layers {

size::Board BoardOf(const manifest::GpuModel& g) {
  size::Board b;
  b.name = g.board.empty() ? g.name : g.board;
  b.datacenter = g.datacenter;
  b.memory_mib = g.memory_mib;
  b.memory_kind = g.memory_kind;
  b.memory_source = g.memory_source;
  b.form = g.form;
  b.server_sizes = g.server_sizes;
  b.nvlink = g.nvlink_domain;
  b.p2p = g.p2p;
  b.link_source = g.link_source;
  return b;
}

size::HostSpec HostSpecOf(const probe::HostFacts& h, const manifest::Compat& c, const std::string& label) {
  size::HostSpec s;
  s.label = label;
  s.cpus = h.cpus;
  s.memory = h.memory_bytes;
  s.disk_free = h.disk_free_bytes;
  s.nvswitches = h.nvswitch_count;
  for (const probe::Gpu& g : h.gpus) {
    size::HostGpu hg;
    hg.device_id = g.device_id;
    hg.nvml_bytes = g.memory_bytes;
    const manifest::GpuModel* m = c.GpuByPci(g.device_id, g.subsystem_vendor_id, g.subsystem_device_id);
    hg.name = m ? (m->board.empty() ? m->name : m->board) : g.name;
    if (m) hg.board = BoardOf(*m);
    s.gpus.push_back(std::move(hg));
  }
  return s;
}

}  // namespace gp::layers
