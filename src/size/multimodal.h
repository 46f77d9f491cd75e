// Models made of parts (docs/size.md, "Multimodal models"): a vision encoder whose image tokens a projector
// maps into a language model's sequence (LLaVA), or two towers trained contrastively (CLIP). Each part is
// frozen or trained (full or LoRA); the estimate adds each part's states and activations to one GPU's
// terms. The towers and presets are sourced tables here; the language model is the task's model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "size/estimate.h"
#include "size/settings.h"

namespace gp::size {

// A transformer tower of a CLIP model, as the public checkpoint builds it.
struct Tower {
  const char* name;     // "clip-vit-l-14-336"
  const char* display;  // "CLIP ViT-L/14-336"
  bool vision = true;   // false: a text tower
  int layers = 0, width = 0, heads = 0, mlp = 0;
  int patch = 0, image = 0;    // vision: patch and image size in pixels (tokens: (image/patch)^2 + 1)
  int context = 0, vocab = 0;  // text: positions and vocabulary
  int proj = 0;                // output projection width (0: none, as LLaVA's CLIPVisionModel)
  uint64_t published = 0;      // the publisher's count, to 0.01M
  const char* source;
  int Tokens() const { return vision ? (image / patch) * (image / patch) + 1 : context; }
};
const Tower* FindTower(const std::string& name);
std::vector<std::string> TowerNames();
uint64_t TowerParams(const Tower& t);

struct Preset {
  const char* name;       // "llava-1.5-7b-stage2"
  const char* display;    // "LLaVA-1.5 7B, stage 2"
  const char* model;      // the language model (model table), "" for CLIP
  const char* vision;     // a tower
  const char* text;       // a contrastive text tower, "" for LLaVA
  const char* projector;  // "mlp2x-gelu", ""
  int image_tokens;
  const char* trained;  // "projector", "projector,language", "vision,text"
  const char* source;
};
const Preset* FindPreset(const std::string& name);
std::vector<std::string> PresetNames();

// The projector's parameters: linear (one matrix with bias) or mlpNx-gelu (N matrices); 0 for an unknown
// kind. `in`: the vision width, `out`: the language model's hidden size.
uint64_t ProjectorParams(const std::string& kind, uint64_t in, uint64_t out);
bool KnownProjector(const std::string& kind);

// The `multimodal.*` settings (settings.h): each validated where it enters.
void ApplyMultimodal(Task& t, const Setting& s);
// Fills what a preset gives and the settings did not (the model, the parts, the published configuration),
// then checks the parts fit together; errors point at the setting. Called first by Finish.
void FinishMultimodal(Task& t);

// The estimate of a multimodal task (t.multimodal.vision set); EstimateTask calls it.
Estimate EstimateMultimodal(const Task& t);

}  // namespace gp::size
