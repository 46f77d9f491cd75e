// The apply journal, /var/lib/gpuprep/journal.json: what a run did, step by step, rewritten atomically
// after every step so a reboot, a crash or SIGKILL leaves an accurate record. A rerun re-plans from the
// host itself; the journal supplies what to resume (manifest, layer filters) and what to verify.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "sys/fs.h"

namespace gp::apply {

inline constexpr const char* kJournalPath = "/var/lib/gpuprep/journal.json";

struct JournalStep {
  std::string id;
  std::vector<std::string> layers;
  std::string status;  // "done" | "failed"
  std::string at;      // UTC timestamp
  std::string detail;
};

struct Journal {
  std::string manifest;  // --manifest as given
  std::string stack;
  std::vector<std::string> only, skip;
  std::string state;  // "running" | "reboot-required" | "failed" | "done"
  std::string reboot_reason;
  std::string started, updated;
  std::vector<JournalStep> steps;
  std::vector<std::string> touched_layers;  // layers changed since the last "done": verified after a resume

  void Touch(const std::vector<std::string>& layers);
};

std::string JournalToText(const Journal& j);
// Throws gp::Error(kExitFailed) "/var/lib/gpuprep/journal.json: <why>" on a corrupt file.
Journal JournalFromText(const std::string& text);

// nullopt when there is no journal.
std::optional<Journal> ReadJournal(const sys::Fs& fs);
sys::WriteResult WriteJournal(sys::Fs& fs, const Journal& j);

}  // namespace gp::apply
