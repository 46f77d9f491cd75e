// TEMPORARY scaffolding while the verbs are written in parallel: each verb's owner deletes its function
// from this file when adding src/cli/<verb>.cc. This file must be gone before the first release.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "util/error.h"

namespace gp::cli {
namespace {
void Stub(CLI::App& app, const char* name) {
  app.add_subcommand(name, "(not yet built)")->callback([name] {
    throw Error(kExitFailed, std::string(name) + ": not built yet");
  });
}
}  // namespace

void RegisterDoctor(CLI::App& app, Context&, int&) { Stub(app, "doctor"); }

}  // namespace gp::cli
