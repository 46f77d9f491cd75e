// `gpuprep accept --expect SPEC|FILE`: what the offer promised, as a spec
// (`8x"H100 SXM5 80GB",cpus=192,ram=2TB,nvme=8x3.84TB`). A GPU is a catalogue board name or a PCI id; sizes
// are decimal (TB = 10^12 bytes), and TiB/GiB are accepted. Errors name --expect and quote the part refused.
#pragma once
#include <string>
#include <vector>

#include "accept/judge.h"

namespace gp::accept {

// A board the catalogue knows: its name (as `gpuprep size` prints it), other names and PCI ids, usable MiB.
struct KnownBoard {
  std::string name;
  std::vector<std::string> names;  // catalogue entry names
  std::vector<std::string> pci_ids;
  uint64_t mib = 0;
};

// The offer as a `kind: Offer` document: the spec's fields as YAML, read by the manifest front end
// (metadata.name required; gpus: {count, board}, cpus, ram, nvme: {count, size}). Throws gp::FileError
// "PATH:LINE:COL: KEY: why" at the value refused, or an unknown key.
Offer ParseOfferDoc(const std::string& text, const std::string& path, const std::vector<KnownBoard>& boards);

// Throws FlagError("--expect") for anything it cannot read, or a board the catalogue does not know.
Offer ParseOfferSpec(const std::string& spec, const std::vector<KnownBoard>& boards);

}  // namespace gp::accept
