// What `gpuprep doctor` prints: the JSON document of docs/json.md and the terminal table, built from the
// layer reports; and the exit code they imply. Pure functions of their inputs (no I/O).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "probe/host.h"
#include "verdict/report.h"

namespace gp::doctor {

struct Summary {
  int ok = 0, warn = 0, fail = 0, skip = 0;
};
Summary Summarize(const std::vector<verdict::LayerReport>& reports);

// kExitOk (0) when no layer failed, kExitFailed (1) otherwise.
int ExitCodeFor(const std::vector<verdict::LayerReport>& reports);

// {"gpuprep", "manifest", "host", "layers": [{name,status,found,wanted,detail,fix,findings}], "summary"},
// keys in that order. found and fix are null when absent.
nlohmann::ordered_json ReportJson(const std::string& manifest_name, const probe::HostFacts& host,
                                  const std::vector<verdict::LayerReport>& reports);

struct TableOptions {
  bool color = false;    // ANSI colours for the status column (Context::use_color())
  bool verbose = false;  // also ok findings, where stack values and host facts came from, probe notes
  std::string title;     // the header line instead of "gpuprep doctor: stack NAME on OS (KERNEL)"
};

// The readable report: a header line, one row per layer (LAYER STATUS FOUND WANTED), under each
// non-ok layer its findings and their fixes, then the summary line. Ends with a newline.
std::string RenderTable(const manifest::Stack& stack, const probe::HostFacts& host,
                        const std::vector<verdict::LayerReport>& reports, const TableOptions& options);

}  // namespace gp::doctor
