// Pinned libraries against the boards a stack claims (compat.yaml library_builds): the default choice skips a
// stack whose NCCL or cuDNN carries no code for one of the host's boards.
#include <catch2/catch.hpp>

#include "manifest/loader.h"

namespace m = gp::manifest;

namespace {
m::HostQuery LibraryHost(const std::vector<std::string>& archs, const std::vector<std::string>& pci_ids) {
  m::HostQuery q{"ubuntu", "22.04", archs, {}};
  for (const auto& pci : pci_ids) q.boards.push_back(m::EmbeddedCompat().GpuByPciId(pci));
  return q;
}
}  // namespace

TEST_CASE("the default choice skips a stack whose NCCL has no code for the host's board", "[manifest]") {
  // NCCL 2.30.7 (volta-r580.173.02-cuda12.9.1) builds no Maxwell code; 2.27.3 (volta-r580-cuda12.9) does.
  CHECK(m::ChooseDefaultStack(LibraryHost({"maxwell"}, {"0x13f2"})).name == "volta-r580-cuda12.9");  // M60
  CHECK(m::ChooseDefaultStack(LibraryHost({"maxwell"}, {"0x17fd"})).name == "volta-r580-cuda12.9");  // M40
  // Pascal keeps the newer stack: 2.30.7 carries sm_60 and sm_61.
  CHECK(m::ChooseDefaultStack(LibraryHost({"pascal"}, {"0x15f8"})).name == "volta-r580.173.02-cuda12.9.1");
  CHECK(m::ChooseDefaultStack(LibraryHost({"pascal"}, {"0x1bb3"})).name == "volta-r580.173.02-cuda12.9.1");
}
