// Layer verdicts: what doctor prints, verify reports and apply consults. A layer's status is its worst
// finding; detail and fix cover every finding (docs/json.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gp::verdict {

enum class Status { kOk, kWarn, kFail, kSkip };
const char* StatusName(Status s);  // "ok", "warn", "fail", "skip"
// Severity order for "worst": fail > warn > ok > skip (a layer with an ok and a skip finding is ok).
int Severity(Status s);

struct Finding {
  Status status = Status::kOk;
  std::string message;             // one sentence: what was found
  std::optional<std::string> fix;  // the exact command or action; required for warn and fail
  // Stable machine-readable name, "<layer>.<what>" ("driver.module-mismatch", "container_toolkit.cve"):
  // reports group by it and scripts match on it; the message may be reworded, the code is not.
  // "" only for findings made outside the layer checks (verify).
  std::string code;
  // The GPU a health finding is about, by its PCI address ("0000:18:00.0"); "" for a finding about the host
  // (or a GPU it does not have). Not part of doctor's JSON: the message names the GPU there.
  std::string gpu_pci;
};

struct LayerReport {
  std::string name;  // os, host, gpu, driver, fabricmanager, cuda, cudnn, nccl, docker,
                     // container_toolkit, image, network
  Status status = Status::kSkip;
  std::optional<std::string> found;  // what the host has ("535.161.08"), null when nothing
  std::string wanted;                // what the stack wants (">= 535.104.05", "8.9.7")
  std::string detail;                // every finding's message joined with "; "
  std::optional<std::string> fix;    // every warn/fail finding's fix joined with "; "
  std::vector<Finding> findings;

  // Adds a finding (and keeps status/detail/fix in step; a fix text already in `fix` is not repeated).
  void Add(Status s, std::string message, std::optional<std::string> fix = std::nullopt);
  // The same, naming the finding with its stable code (every layer check does).
  void Add(std::string code, Status s, std::string message, std::optional<std::string> fix = std::nullopt);
};

}  // namespace gp::verdict
