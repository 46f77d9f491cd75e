// The task's settings, one table for the command line and for `kind: Task` documents: every key has a
// dotted document path ("lora.rank") and a flag ("--lora-rank"); values are validated where they enter,
// and errors name where the value came from (`PATH:LINE:COL: message` or `--flag: message`).
#pragma once
#include <string>
#include <vector>

#include "size/task.h"

namespace gp::size {

struct Setting;

struct KeyInfo {
  const char* key;   // document path, e.g. "parallel.tp"
  const char* flag;  // "--tp"
  const char* help;
  bool boolean;  // a flag that may stand alone ("--chunked-loss" = "--chunked-loss=true")
  void (*apply)(Task& t, const Setting& s);  // reads the value into the task (Apply calls it)
};

// Every key, in the order they are applied (the model first).
const std::vector<KeyInfo>& SettingKeys();

struct Setting {
  std::string key;    // one of SettingKeys()
  std::string value;  // a scalar; list values joined with ','
  Origin origin;
};

// Applies one setting (throws gp::FileError / gp::FlagError at its origin). `model:` selects a table row;
// `config:` is recorded in `config_path` for the caller to read (settings never read files).
void Apply(Task& t, const Setting& s);

// Checks the combination once every setting is in; errors point at the setting that cannot be combined.
// Also turns --params with architecture settings into an architecture.
void Finish(Task& t);

// "7e9", "7.5B", "350M", "6738415616" -> a parameter count; false when not one.
bool ParseCount(const std::string& text, uint64_t* out);

}  // namespace gp::size
