// Price documents (kind: Prices), read as strictly as stacks: the same YAML front end (no duplicate keys,
// anchors or tags; UTF-8 without control characters; size and depth limits) and typed fields. What the
// prices mean (which GPU an entry names, what a configuration costs) is src/prices/'s business.
//
//   apiVersion: gpuprep/v1
//   kind: Prices
//   metadata: {name: my-cloud}
//   currency: USD                 # three capital letters
//   prices:
//     - {gpu: "H100 SXM5 80GB", per_gpu_hour: 2.49}   # a board, a catalogue name or a PCI id ("0x2330")
#pragma once
#include <string>
#include <vector>

namespace gp::manifest {

struct PriceEntry {
  std::string gpu;          // as written (one line, at most 200 bytes)
  double per_gpu_hour = 0;  // > 0, at most 1e6
  int line = 0, col = 0;    // of the gpu value
};

struct PricesDoc {
  std::string name;
  std::string description;
  std::string currency;
  std::vector<PriceEntry> entries;  // at least one, at most 4096, no gpu twice (compared case-insensitively)
};

// Throws gp::FileError "PATH:LINE:COL: message" at the offending value.
PricesDoc ParsePricesDoc(const std::string& text, const std::string& display_path);

}  // namespace gp::manifest
