// The table of layers (ninja's tool table's style): one row per layer, in the order gpuprep checks, installs
// and verifies them: its check, plan and verify, and what its plan needs re-read of the host's files. A row
// is defined beside its layer's check (`layers/<layer>/check.cc`; plan and verify in `plan.cc`, `verify.cc`);
// names, doctor's rows, the plan's layers, `--only`/`--skip`, verify's checks and defaults, and the host's
// file half (host/files.h) derive from it. Adding a finding touches that layer's folder only (architecture.sh
// checks it); the CUDA components (cuda, cudnn, nccl) also share one plan and a fresh-process verify that
// know them by name (plan/components.cc, apply/verify_fresh.cc).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "apply/verify.h"
#include "host/files.h"
#include "layers/check.h"
#include "manifest/model.h"
#include "plan/layer_plan.h"
#include "probe/host.h"
#include "verdict/report.h"

namespace gp::layers {

struct Layer {
  const char* name;
  // doctor's read-only check (layers/check.h).
  LayerReport (*check)(const CheckInput& in);
  // Whether doctor reports the layer on this host; null: always (fabricmanager: NVSwitch hosts only).
  bool (*shown)(const probe::HostFacts& host);
  // What `apply` does for the layer (plan/layer_plan.h); null: apply installs nothing (os, host, gpu). Only
  // rows with a plan are accepted by `apply`/`plan` --only and --skip.
  plan::LayerPlan (*plan)(const plan::LayerContext& ctx);
  // The layer's active check after apply and in `gpuprep verify` (apply/verify.h); null: none.
  void (*verify)(const apply::VerifyEnv& env, LayerReport& report);
  // Whether `gpuprep verify` without --only checks the layer on this host with this stack; null: never.
  bool (*verified_by_default)(const manifest::Stack& stack, const probe::HostFacts& host);
  // What the layer's plan needs of the file half of the host beyond what every plan reads (host/files.h: the
  // kernel packages it may add, files as they are, redistributable installs), read again before every
  // re-plan; null: nothing more.
  void (*reads)(const manifest::Stack& stack, const probe::HostFacts& host, host::Reads& out);
};

// Every layer, in order: os, host, gpu, driver, fabricmanager, cuda, cudnn, nccl, docker, container_toolkit,
// image, network.
const std::vector<Layer>& Layers();

// The row named `name`; nullptr when there is none.
const Layer* FindLayer(std::string_view name);

// The canonical layer order (docs/cli.md, "Layers"): every row's name.
const std::vector<std::string>& LayerNames();

// What a doctor report holds, in order: the "stack" row (the stack checked against; not a layer apply
// installs or --only selects), then LayerNames().
const std::vector<std::string>& ReportNames();

// The layers apply installs, in order: the names of the rows with a plan.
const std::vector<std::string>& ApplyLayers();

// The layers `gpuprep verify` checks without --only, in order.
std::vector<std::string> DefaultVerifyLayers(const manifest::Stack& stack, const probe::HostFacts& host);

// What every row declares it needs re-read (Layer::reads), for host::ReadFiles.
host::Reads HostReads(const manifest::Stack& stack, const probe::HostFacts& host);

// A CUDA component's redistributable install, when the stack takes it from NVIDIA's archives (the reads of
// the cuda, cudnn and nccl rows); nothing when its request cannot be made (its plan refuses with the reason).
void RedistReads(const char* layer, const manifest::ComponentSpec& spec, const probe::HostFacts& host,
                 host::Reads& out);

// One layer's active check: its row's verify function (a skip finding when it has none).
LayerReport VerifyLayer(const std::string& layer, const apply::VerifyEnv& env);

// Each layer's row, defined in its check.cc.
extern const Layer kOsLayer, kHostLayer, kGpuLayer, kDriverLayer, kFabricManagerLayer, kCudaLayer,
    kCudnnLayer, kNcclLayer, kDockerLayer, kContainerToolkitLayer, kImageLayer, kNetworkLayer;

}  // namespace gp::layers
