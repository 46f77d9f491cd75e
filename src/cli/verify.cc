// `gpuprep verify [--only L]`: active checks on the live host (apply/verify.h): the driver answers through
// NVML, CUDA initialises, cuDNN and NCCL load at the pinned versions. Exit 1 when a check fails.
#include "apply/verify.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/planner.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
void RegisterVerify(CLI::App* sub, Context& ctx, int& exit_code) {
  auto only = std::make_shared<std::vector<std::string>>();
  sub->add_option("--only", *only, "Verify only these layers (repeatable, or comma-separated)");
  sub->callback([&ctx, &exit_code, only] {
    auto layers = layers::ParseLayerList("--only", *only);
    Target t = LoadTarget(ctx, ctx.opts.manifest);
    if (layers.empty()) layers = layers::DefaultVerifyLayers(t.stack, t.facts);
    const bool live = ctx.opts.root.empty();
    apply::VerifyEnv env{t.fs.get(), live ? ctx.native : nullptr, &t.stack, &t.facts,
                         live ? ctx.unix_http : nullptr};
    nlohmann::json arr = nlohmann::json::array();
    int counts[4] = {0, 0, 0, 0};
    bool failed = false;
    std::string table;
    for (const auto& name : layers) {
      auto r = layers::VerifyLayer(name, env);
      counts[static_cast<int>(r.status)]++;
      failed = failed || r.status == verdict::Status::kFail;
      arr.push_back({{"name", r.name},
                     {"status", verdict::StatusName(r.status)},
                     {"found", r.found ? nlohmann::json(*r.found) : nlohmann::json(nullptr)},
                     {"wanted", r.wanted},
                     {"detail", r.detail},
                     {"fix", r.fix ? nlohmann::json(*r.fix) : nlohmann::json(nullptr)}});
      char line[64];
      std::snprintf(line, sizeof line, "%-14s %-5s ", r.name.c_str(), verdict::StatusName(r.status));
      table += line + TerminalSafe(r.detail) + "\n";  // details quote program output
      if (r.fix) table += std::string(21, ' ') + "fix: " + TerminalSafe(*r.fix) + "\n";
    }
    if (ctx.opts.json) {
      nlohmann::json doc = {
          {"gpuprep", GPUPREP_VERSION},
          {"manifest", t.stack.name},
          {"layers", arr},
          {"summary", {{"ok", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}, {"skip", counts[3]}}}};
      PrintJson(ctx, doc);
    } else {
      *ctx.out << table;
    }
    exit_code = failed ? kExitFailed : kExitOk;
  });
}

}  // namespace gp::cli
