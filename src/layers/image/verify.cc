// image's verify: the image's torch sees every GPU, in a container with the stack's GPU request (the kit of
// apply/verify_container.h). An image without PyTorch is a skip: its GPU check is the toolkit's.
#include "apply/verify_container.h"
#include "layers/image/image.h"
#include "util/strings.h"

namespace gp::layers {

void VerifyImage(const apply::VerifyEnv& env, verdict::LayerReport& r) {
  using verdict::Status;
  const manifest::Stack& s = *env.stack;
  apply::EngineAnswer a = apply::AskEngine(env);
  if (apply::AddNoEngine(a, r)) return;
  auto image = apply::StackImagePresent(*a.engine, s, r);
  if (!image) return;
  // NGC's PyTorch images (and PyTorch's own) set PYTORCH_VERSION in their config; a CUDA base image has none.
  if (!image->details.CarriesPyTorch())
    return r.Add(Status::kSkip,
                 image->ref + " carries no PyTorch (no PYTORCH_VERSION in its config): no torch check");
  const char* const torch_check =
      "import torch; print(torch.cuda.device_count(), torch.cuda.get_device_name(0))";
  auto res = a.engine->Run(apply::StackGpuRun(s, image->ref, {"python", "-c", torch_check}));
  if (!res.ran || res.exit_code != 0) return apply::AddRunFailure(res, "the torch check in " + image->ref, r);
  auto words = SplitWords(apply::LastLines(res.out));
  auto count = words.empty() ? std::nullopt : ParseUnsigned(words[0]);
  if (!count)
    return r.Add(Status::kFail, "the torch check printed \"" + apply::LastLines(res.out) + "\"",
                 "gpuprep doctor");
  std::string name;
  for (size_t i = 1; i < words.size(); ++i) name += (i > 1 ? " " : "") + words[i];
  const size_t gpus = env.facts ? env.facts->gpus.size() : 0;
  r.found = std::to_string(*count) + " x " + name;
  if (*count != gpus)
    return r.Add(Status::kFail,
                 "torch sees " + std::to_string(*count) + " GPUs but the host has " + std::to_string(gpus),
                 "gpuprep doctor");
  r.Add(Status::kOk, "torch in " + image->ref + " sees " + std::to_string(*count) + " GPUs (" + name + ")");
}

}  // namespace gp::layers
