#include "layers/table.h"

namespace gp::layers {

const std::vector<Layer>& Layers() {
  static const std::vector<Layer> kLayers = {
      kOsLayer,    kHostLayer, kGpuLayer,    kDriverLayer,           kFabricManagerLayer, kCudaLayer,
      kCudnnLayer, kNcclLayer, kDockerLayer, kContainerToolkitLayer, kImageLayer,         kNetworkLayer};
  return kLayers;
}

const Layer* FindLayer(std::string_view name) {
  for (const Layer& l : Layers())
    if (name == l.name) return &l;
  return nullptr;
}

const std::vector<std::string>& ApplyLayers() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const Layer& l : Layers())
      if (l.plan) out.emplace_back(l.name);
    return out;
  }();
  return kNames;
}

std::vector<std::string> DefaultVerifyLayers(const manifest::Stack& stack, const probe::HostFacts& host) {
  std::vector<std::string> out;
  for (const Layer& l : Layers())
    if (l.verified_by_default && l.verified_by_default(stack, host)) out.emplace_back(l.name);
  return out;
}

const std::vector<std::string>& LayerNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const Layer& l : Layers()) out.emplace_back(l.name);
    return out;
  }();
  return kNames;
}

const std::vector<std::string>& ReportNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = {"stack"};
    names.insert(names.end(), LayerNames().begin(), LayerNames().end());
    return names;
  }();
  return kNames;
}

LayerReport VerifyLayer(const std::string& layer, const apply::VerifyEnv& env) {
  LayerReport r;
  r.name = layer;
  const Layer* row = FindLayer(layer);
  if (row && row->verify)
    row->verify(env, r);
  else
    r.Add(Status::kSkip, "verify has no active check for this layer");
  return r;
}

std::vector<LayerReport> CheckAll(const CheckInput& in) {
  std::vector<LayerReport> out;
  out.push_back(CheckStack(in));
  for (const Layer& l : Layers())
    if (!l.shown || l.shown(in.host) || (l.check == CheckNetwork && in.nodes > 1)) out.push_back(l.check(in));
  return out;
}

}  // namespace gp::layers
