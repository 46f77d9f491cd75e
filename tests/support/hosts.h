// Host values shared by the hand-built HostFacts of the layer and apply tests.
#pragma once
#include <string>

#include "probe/host.h"

namespace gp::test {

// An H100 SXM5 80GB (0x2330) at PCI 0000:1<index>:00.0, bound to `driver` ("nvidia", "nouveau").
inline probe::Gpu H100Gpu(int index, const std::string& driver) {
  probe::Gpu g;
  g.index = index;
  g.pci = "0000:1" + std::to_string(index) + ":00.0";
  g.device_id = "0x2330";
  g.name = "H100 SXM5 80GB";
  g.architecture = "hopper";
  g.compute_capability = "9.0";
  g.driver = driver;
  g.known = true;
  return g;
}

}  // namespace gp::test
