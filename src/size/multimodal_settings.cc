// The `multimodal.*` settings and their checks (multimodal.h): every value validated where it enters, every
// error at the setting's origin.
#include <cstdlib>

#include "size/multimodal.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::size {
namespace {

const char* const kParts[] = {"vision", "projector", "language", "text"};

bool GivenMm(const Task& t, const std::string& key) { return t.origins.count(key) > 0; }

const Origin& OriginOf(const Task& t, const std::string& key) {
  static const Origin none;
  const auto it = t.origins.find(key);
  return it == t.origins.end() ? none : it->second;
}

std::string Listed(const std::vector<std::string>& names) { return Join(names, ", "); }

std::vector<std::string> Kind(bool vision) {
  std::vector<std::string> out;
  for (const std::string& name : TowerNames())
    if (FindTower(name)->vision == vision) out.push_back(name);
  return out;
}

// A part is one model: a preset's name is a model of parts (the model naming itself as its part).
const Tower& TowerSetting(const Setting& s, bool vision) {
  if (FindPreset(s.value))
    s.origin.Fail(QuoteToken(s.value) + " is a multimodal model of parts, not a part of one");
  const Tower* tw = FindTower(s.value);
  if (!tw || tw->vision != vision)
    s.origin.Fail(std::string("unknown ") + (vision ? "vision" : "text") + " encoder " + QuoteToken(s.value) +
                  " (known: " + Listed(Kind(vision)) + ")");
  return *tw;
}

void ApplyTrain(Task& t, const Setting& s) {
  t.multimodal.trained.clear();
  if (Trim(s.value) == "none") return;
  for (const std::string& raw : Split(s.value, ',')) {
    const std::string item(Trim(raw));
    const size_t eq = item.find('=');
    const std::string part = item.substr(0, eq);
    const std::string how = eq == std::string::npos ? "full" : item.substr(eq + 1);
    bool known = false;
    for (const char* p : kParts) known = known || part == p;
    if (!known)
      s.origin.Fail("unknown part " + QuoteToken(part) + " (parts: vision, projector, language, text)");
    if (how != "full" && how != "lora")
      s.origin.Fail("part " + part + ": expected full or lora, got " + QuoteToken(how));
    if (t.multimodal.trained.count(part)) s.origin.Fail("part " + part + " is listed twice");
    t.multimodal.trained[part] = how == "lora" ? Method::kLora : Method::kFull;
  }
}

// The published configuration a preset names, where the settings did not give it.
void PresetDefaults(Task& t, const Preset& p) {
  Task::Multimodal& mm = t.multimodal;
  if (!GivenMm(t, "multimodal.vision")) mm.vision = p.vision;
  if (!GivenMm(t, "multimodal.text")) mm.text = p.text;
  if (!GivenMm(t, "multimodal.projector")) mm.projector = p.projector;
  if (!GivenMm(t, "multimodal.image_tokens")) mm.image_tokens = p.image_tokens;
  if (!GivenMm(t, "multimodal.train"))
    ApplyTrain(t, Setting{"multimodal.train", p.trained, OriginOf(t, "multimodal.preset")});
  if (*p.model && !GivenMm(t, "model") && !GivenMm(t, "config") && !GivenMm(t, "params")) {
    t.arch = *FindModel(p.model);
    t.model_source = "preset " + std::string(p.name);
    t.origins["model"] = OriginOf(t, "multimodal.preset");
  }
  const std::string name = p.name;
  if (name.rfind("llava-", 0) != 0) return;
  // LLaVA-1.5's scripts: bf16, gradient checkpointing, 2048 tokens in all (text is cut to make room for
  // the image's), one 8-GPU node; stage 1 DeepSpeed ZeRO-2 at 32 per GPU, stage 2 ZeRO-3 at 16.
  const bool stage1 = name.find("stage1") != std::string::npos;
  if (!GivenMm(t, "parallel.strategy")) t.strategy = stage1 ? Strategy::kZero2 : Strategy::kZero3;
  if (!GivenMm(t, "batch.micro_batch")) t.micro_batch = stage1 ? 32 : 16;
  if (!GivenMm(t, "grad_checkpointing")) t.checkpointing = Checkpointing::kFull;
  if (!GivenMm(t, "parallel.gpus")) t.gpus = 8;
  if (!GivenMm(t, "batch.seq")) t.seq = 2048 - mm.image_tokens;
}

}  // namespace

void ApplyMultimodal(Task& t, const Setting& s) {
  const std::string& k = s.key;
  Task::Multimodal& mm = t.multimodal;
  if (k == "multimodal.preset") {
    const Preset* p = FindPreset(s.value);
    if (!p)
      s.origin.Fail("unknown multimodal preset " + QuoteToken(s.value) +
                    " (presets: " + Listed(PresetNames()) + ")");
    mm.preset = p->name;
  } else if (k == "multimodal.vision") {
    mm.vision = TowerSetting(s, true).name;
  } else if (k == "multimodal.text") {
    mm.text = TowerSetting(s, false).name;
  } else if (k == "multimodal.projector") {
    const std::string v = ToLower(std::string(Trim(s.value)));
    if (v != "none" && !KnownProjector(v))
      s.origin.Fail("unknown projector " + QuoteToken(s.value) +
                    " (linear, mlp2x-gelu ... mlp8x-gelu, none)");
    mm.projector = v == "none" ? "" : v;
  } else if (k == "multimodal.image_tokens") {
    const std::string v(Trim(s.value));
    char* end = nullptr;
    const long long n = v.empty() ? 0 : std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 1 || n > 65536)
      s.origin.Fail("expected image tokens between 1 and 65536, got " + QuoteToken(s.value));
    mm.image_tokens = static_cast<int>(n);
  } else if (k == "multimodal.train") {
    ApplyTrain(t, s);
  } else {
    s.origin.Fail("unknown setting " + QuoteToken(k));
  }
}

namespace {

// Two contrastive towers (a --text-encoder): no language model (`lm`: one was given), projector or image
// tokens; the task is named after the towers (or the preset).
void MultimodalContrastiveTask(Task& t, bool lm) {
  const Task::Multimodal& mm = t.multimodal;
  if (lm)
    OriginOf(t, GivenMm(t, "model")    ? "model"
                : GivenMm(t, "config") ? "config"
                                       : "params")
        .Fail("a contrastive text encoder takes the language model's place; drop the model");
  if (!mm.projector.empty())
    OriginOf(t, "multimodal.projector").Fail("two contrastive towers take no projector");
  if (GivenMm(t, "multimodal.image_tokens"))
    OriginOf(t, "multimodal.image_tokens").Fail("image tokens go into a language model; this task has none");
  t.arch = Architecture{};
  t.arch.name = mm.preset.empty() ? mm.vision : mm.preset;
  t.arch.display = mm.preset.empty() ? mm.vision + " + " + mm.text : FindPreset(mm.preset)->display;
  t.model_source = "towers";
}

// A language model with a vision tower: a decoder with its shape, a projector where the widths differ, and
// the image tokens (by default the vision tower's patches) within the sequence limit.
void MultimodalCheckLanguage(Task& t, const Tower& vision, const std::string& first) {
  Task::Multimodal& mm = t.multimodal;
  if (t.arch.family != Family::kDecoder || !t.arch.HasShape())
    OriginOf(t, "model")
        .Fail("the language model must be a decoder with its shape (layers, hidden size, heads)");
  if (mm.projector.empty() && vision.width != t.arch.hidden)
    OriginOf(t, GivenMm(t, "multimodal.projector") ? "multimodal.projector" : first)
        .Fail("the vision width " + std::to_string(vision.width) + " differs from the language model's " +
              std::to_string(t.arch.hidden) + ": name a projector (--projector mlp2x-gelu)");
  if (mm.image_tokens == 0) mm.image_tokens = vision.Tokens() - 1;  // the patches, without the class token
  if (static_cast<long long>(t.seq) + mm.image_tokens > (1 << 20))
    OriginOf(t, GivenMm(t, "multimodal.image_tokens") ? "multimodal.image_tokens" : "batch.seq")
        .Fail("text and image tokens exceed 2^20 in one sequence");
}

// Each part --train names is present, and the projector trains in full.
void MultimodalCheckTrained(const Task& t) {
  const Task::Multimodal& mm = t.multimodal;
  for (const auto& [part, how] : mm.trained) {
    const bool present = part == "vision" || (part == "projector" && !mm.projector.empty()) ||
                         (part == "language" && mm.text.empty()) || (part == "text" && !mm.text.empty());
    if (!present)
      OriginOf(t, GivenMm(t, "multimodal.train") ? "multimodal.train" : "multimodal.preset")
          .Fail("this model has no " + part + " part to train");
    if (part == "projector" && how != Method::kFull)
      OriginOf(t, "multimodal.train").Fail("the projector trains in full (it has no LoRA form)");
  }
}

// Settings a multimodal model does not take: --method, tensor and pipeline parallelism, embedding tables,
// another workload.
void MultimodalCheckConflicts(const Task& t, const std::string& first) {
  if (GivenMm(t, "method"))
    OriginOf(t, "method")
        .Fail("a multimodal model trains each part as --train says (language=lora), not --method");
  if (t.tp > 1 || t.pp > 1)
    OriginOf(t, t.tp > 1 ? "parallel.tp" : "parallel.pp")
        .Fail("a multimodal model is sized data parallel only (ZeRO or FSDP shard it)");
  if (!t.embedding_rows.empty() || !t.embedding_given.empty())
    OriginOf(t, first).Fail("embedding tables are a recommender's, not a multimodal model's");
  if (t.workload && *t.workload != WorkloadKind::kMultimodal)
    OriginOf(t, "host.workload").Fail("a model of parts is a multimodal workload: --workload multimodal");
}

}  // namespace

void FinishMultimodal(Task& t) {
  std::string first;  // the first multimodal setting given, where a missing part is reported
  for (const auto& [key, origin] : t.origins)
    if (key.rfind("multimodal.", 0) == 0 && first.empty()) first = key;
  if (first.empty()) return;
  Task::Multimodal& mm = t.multimodal;
  if (!mm.preset.empty()) PresetDefaults(t, *FindPreset(mm.preset));
  if (mm.vision.empty())
    OriginOf(t, first).Fail("a multimodal model needs a vision encoder: --vision-encoder NAME");
  const bool lm = GivenMm(t, "model") || GivenMm(t, "config") || GivenMm(t, "params");
  if (!mm.text.empty()) {
    MultimodalContrastiveTask(t, lm);
  } else if (!lm) {
    OriginOf(t, first).Fail(
        "a multimodal model needs its language model (--model, --config) or a --text-encoder");
  }
  const Tower& vision = *FindTower(mm.vision);
  if (mm.text.empty()) MultimodalCheckLanguage(t, vision, first);
  MultimodalCheckTrained(t);
  MultimodalCheckConflicts(t, first);
  t.workload = WorkloadKind::kMultimodal;
}

}  // namespace gp::size
