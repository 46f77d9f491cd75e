// One registration function per verb (one file each in src/cli/), the micromamba way. Each adds its
// subcommand and options to `app` and sets a callback that runs the verb and stores its exit code.
#pragma once
#include "cli/context.h"

namespace CLI {
class App;
}

namespace gp::cli {

void RegisterDoctor(CLI::App& app, Context& ctx, int& exit_code);
void RegisterManifest(CLI::App& app, Context& ctx, int& exit_code);
void RegisterPlan(CLI::App& app, Context& ctx, int& exit_code);
void RegisterApply(CLI::App& app, Context& ctx, int& exit_code);
void RegisterVerify(CLI::App& app, Context& ctx, int& exit_code);
void RegisterLaunch(CLI::App& app, Context& ctx, int& exit_code);
void RegisterFleetReport(CLI::App& app, Context& ctx, int& exit_code);
void RegisterSize(CLI::App& app, Context& ctx, int& exit_code);
void RegisterWatch(CLI::App& app, Context& ctx, int& exit_code);
void RegisterAccept(CLI::App& app, Context& ctx, int& exit_code);
void RegisterNcclLog(CLI::App& app, Context& ctx, int& exit_code);

}  // namespace gp::cli
