// The cuDNN request the redist install tests share (release 9.12.0, CUDA 12, x86_64, served from `base`),
// their install options (a test CA, a 1 ms backoff) and the listing of the root's /opt/gpuprep/cudnn.
#pragma once
#include <chrono>
#include <string>

#include "apply/harness.h"
#include "redist/install.h"
#include "util/strings.h"

namespace gp::test {

inline redist::Request CudnnRequest(const std::string& base, const std::string& version = "9.12.0.46") {
  manifest::ComponentSpec c;
  c.version = Pin(version);
  c.cuda_major = 12;
  c.source = "redist";
  c.redist.release = "9.12.0";
  c.redist.components = {"cudnn"};
  c.redist.base = base;
  return redist::MakeRequest("cudnn", c, "x86_64");
}

inline redist::InstallOptions FastRetries(const std::string& ca) {
  redist::InstallOptions o;
  o.ca_file = ca;
  o.backoff = std::chrono::milliseconds(1);
  return o;
}

// Everything under the root's /opt/gpuprep/cudnn, hidden entries included.
inline std::string CudnnListing(TempRoot& root) { return Join(root.fs().List("/opt/gpuprep/cudnn"), " "); }

}  // namespace gp::test
