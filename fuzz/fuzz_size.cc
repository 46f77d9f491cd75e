// `gpuprep size`'s outside inputs: any bytes as a Hugging Face config.json (first byte even) or as a
// `kind: Task` document (odd) -> an estimate or a gp::Error pointing at PATH:LINE:COL. Never a crash, a
// hang, another exception type, or a non-finite number in the answer.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "manifest/settings_doc.h"
#include "size/estimate.h"
#include "size/hf_config.h"
#include "size/settings.h"
#include "util/error.h"

namespace {

void Check(const gp::size::Task& t) {
  const gp::size::Estimate e = gp::size::EstimateTask(t);
  for (const auto& term : e.terms)
    if (!std::isfinite(term.bytes)) std::abort();
  if (!std::isfinite(e.per_gpu) || e.per_gpu < 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    gp::size::Task t;
    if (data[0] % 2 == 0) {
      t.arch = gp::size::ParseHfConfig(text, "config.json");
      t.origins["config"] = gp::size::Origin{"", 0, 0, "--config"};
    } else {
      std::vector<std::string> leaves;
      for (const auto& k : gp::size::SettingKeys()) leaves.emplace_back(k.key);
      for (const auto& s : gp::manifest::ParseSettingsDoc(text, "task.yaml", "Task", leaves).settings) {
        if (s.key == "config") continue;  // the fuzzer reads no files
        gp::size::Apply(t,
                        gp::size::Setting{s.key, s.value, gp::size::Origin{"task.yaml", s.line, s.col, ""}});
      }
    }
    gp::size::Finish(t);
    Check(t);
    if (t.gpu_memory > 0) (void)gp::size::SmallestFit(t, t.gpu_memory);
  } catch (const gp::Error&) {
  }
  return 0;
}
