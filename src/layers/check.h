// The read-only layer checks behind `gpuprep doctor` (and the "check" verb of apply/verify): each turns
// the host's facts and the stack into one LayerReport whose findings carry the exact fix. Every rule reads
// its numbers from Compat (NVIDIA's tables) or the Stack; no version is written into these files.
#pragma once
#include <vector>

#include "manifest/model.h"
#include "probe/host.h"
#include "verdict/report.h"
#include "verdict/rules.h"

namespace gp::layers {

// The verdict values and shared rules (verdict/), as the layer checks name them.
using verdict::AllDatacenter;
using verdict::ApplyFix;
using verdict::CheckCudaAgainstGpus;
using verdict::CudaVerdict;
using verdict::DriverRunsCuda;
using verdict::Finding;
using verdict::GpuModelOf;
using verdict::HostDriverVersion;
using verdict::HostGpuModels;
using verdict::HostQueryFor;
using verdict::LayerReport;
using verdict::NewestStackFor;
using verdict::ParseFound;
using verdict::Severity;
using verdict::Status;
using verdict::StatusName;
using verdict::ToolkitInstallFix;

struct CheckInput {
  const manifest::Stack& stack;
  const manifest::Compat& compat;
  const probe::HostFacts& host;
  std::string today;  // "YYYY-MM-DD" (UTC) from the clock seam; "" skips date checks (end of life)
  // The host's site file when the stack is it ("" otherwise): a move to a newer stack starts by editing it.
  std::string site_file;
  // How many nodes the user's jobs span (doctor --nodes; 0: not said). Above 1 the network layer is shown on
  // every host and its faults fail (layers/network/check.cc); otherwise they are at most warnings.
  int nodes = 0;
};

LayerReport CheckStack(const CheckInput& in);  // the stack itself: a newer one for this host (doctor)
LayerReport CheckOs(const CheckInput& in);     // OS supported by the stack, dpkg state, reboot
LayerReport CheckHost(const CheckInput& in);   // CPUs, RAM, /dev/shm per GPU; a named task's fit
LayerReport CheckGpu(const CheckInput& in);    // GPUs present, known, architecture in the stack
// Only the GPU health findings (doctor --health): the gpu layer's bus, memory, clocks, NVLink and Xid
// findings, and the driver layer's recovery actions; the stack plays no part.
std::vector<LayerReport> CheckHealthOnly(const CheckInput& in);
LayerReport CheckDriver(const CheckInput& in);            // nouveau, module/userspace, branch, CUDA, holds
LayerReport CheckFabricManager(const CheckInput& in);     // NVSwitch hosts: FM at the driver's version
LayerReport CheckCuda(const CheckInput& in);              // toolkit version, compute capability, driver
LayerReport CheckCudnn(const CheckInput& in);             // installed, version, CUDA major
LayerReport CheckNccl(const CheckInput& in);              // installed, version, CUDA major
LayerReport CheckDocker(const CheckInput& in);            // CLI and engine
LayerReport CheckContainerToolkit(const CheckInput& in);  // 4 packages in step, CVEs, runtime or CDI
LayerReport CheckImage(const CheckInput& in);             // the image's CUDA against driver and GPUs
LayerReport CheckNetwork(const CheckInput& in);           // RDMA ports, RoCE v2 GIDs, GPUDirect RDMA, EFA

// The stack row, then each row of the table of layers (layers/table.h) that the host shows, in order
// (ReportNames()): fabricmanager only when the host has NVSwitches, network only when it has RDMA devices.
std::vector<LayerReport> CheckAll(const CheckInput& in);

// cuDNN and NCCL (layers/library.cc): installed; at the stack's version (compared on as many parts as the
// stack gives: "8.9.7" matches 8.9.7.29; another major fails, another minor/patch warns); built for the
// stack's CUDA major (spec.cuda_major, else the stack CUDA's major) and for the installed CUDA's major.
LayerReport CheckCudaLibrary(const CheckInput& in, const std::string& layer, const std::string& label,
                             const manifest::ComponentSpec& spec, const probe::Component& host);

}  // namespace gp::layers
