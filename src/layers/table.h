// The table of layers (in the style of ninja's tool table): one row per layer, in the order gpuprep checks,
// installs and verifies them. Each row is defined beside its layer's check (`layers/<layer>.cc`); the names,
// doctor's rows, the layers `--only`/`--skip` accept, verify's default layers and the "apply this layer" fix
// all derive from it, so adding a layer or a finding touches that layer's file only.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "layers/check.h"
#include "layers/report.h"
#include "manifest/model.h"
#include "probe/host.h"

namespace gp::layers {

struct Layer {
  const char* name;
  // doctor's read-only check (layers/check.h).
  LayerReport (*check)(const CheckInput& in);
  // Whether doctor reports the layer on this host; null: always (fabricmanager: NVSwitch hosts only).
  bool (*shown)(const probe::HostFacts& host);
  // Whether `apply` installs the layer: only these rows are accepted by `apply`/`plan` --only and --skip,
  // and only they have a plan (plan/) and an active verify (apply/verify.h).
  bool installs;
  // Whether `gpuprep verify` without --only checks the layer on this host with this stack; null: never.
  bool (*verified_by_default)(const manifest::Stack& stack, const probe::HostFacts& host);
};

// Every layer, in order: os, host, gpu, driver, fabricmanager, cuda, cudnn, nccl, docker, container_toolkit,
// image.
const std::vector<Layer>& Layers();

// The row named `name`; nullptr when there is none.
const Layer* FindLayer(std::string_view name);

// The names of the rows that install something (apply's layers), in order.
const std::vector<std::string>& InstallableLayerNames();

// The layers `gpuprep verify` checks without --only, in order.
std::vector<std::string> DefaultVerifyLayers(const manifest::Stack& stack, const probe::HostFacts& host);

// Each layer's row, defined in its file.
extern const Layer kOsLayer, kHostLayer, kGpuLayer, kDriverLayer, kFabricManagerLayer, kCudaLayer,
    kCudnnLayer, kNcclLayer, kDockerLayer, kContainerToolkitLayer, kImageLayer;

}  // namespace gp::layers
