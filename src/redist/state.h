// Whether a redistributable install is in place (pure: reads through the Fs), for plan and doctor.
#pragma once
#include <string>

#include "redist/request.h"
#include "sys/fs.h"

namespace gp::redist {

struct State {
  bool installed = false;  // current -> the pinned prefix, its lib/ present, the ld.so.conf.d entry written
  std::string found;       // what `current` points at ("9.12.0.46-cuda12"), "" when nothing
  std::string detail;      // one line: what is there or what is missing
};

State Inspect(const sys::Fs& fs, const Request& req);

}  // namespace gp::redist
