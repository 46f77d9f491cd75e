// What the layer table's rows declare they need of the file half of the host (layers/table.h HostReads).
#include "layers/table.h"
#include "redist/error.h"

namespace gp::layers {

host::Reads HostReads(const manifest::Stack& stack, const probe::HostFacts& host) {
  host::Reads out;
  for (const Layer& l : Layers())
    if (l.reads) l.reads(stack, host, out);
  return out;
}

void RedistReads(const char* layer, const manifest::ComponentSpec& spec, const probe::HostFacts& host,
                 host::Reads& out) {
  if (!spec.enabled || spec.source != "redist" || !spec.version.known()) return;
  try {
    out.redist.push_back(redist::MakeRequest(layer, spec, host.arch));
  } catch (const redist::RedistError&) {  // the plan refuses the layer with the reason
  }
}

}  // namespace gp::layers
