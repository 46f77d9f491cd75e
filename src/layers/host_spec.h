// The catalogue and a probed host as src/size/ sees them: a catalogue entry as a size::Board, and the host's
// facts as the size::HostSpec that size::JudgeHost judges (shared by `gpuprep size --host` and doctor's host
// layer, so both judge a host from the same values).
#pragma once
#include <string>

#include "manifest/model.h"
#include "probe/host.h"
#include "size/host_check.h"

namespace gp::layers {

// The board of a catalogue entry: its `board` name (else its own), memory with its source, form, server
// sizes and links.
size::Board BoardOf(const manifest::GpuModel& g);

// The host's CPUs, RAM, free disk under /var, NVSwitches and GPUs (NVML's memory when the host gave it, the
// catalogue's board when the catalogue knows the PCI id); `label` names it in the verdict.
size::HostSpec HostSpecOf(const probe::HostFacts& h, const manifest::Compat& c, const std::string& label);

}  // namespace gp::layers
