// What the plan's renderers share (render.cc: text and JSON; render_sh.cc: the shell script). Internal to
// plan/.
#pragma once
#include <string>

#include "plan/plan.h"

namespace gp::plan::detail {

// A file mode as four octal digits ("0644").
std::string Octal(unsigned mode);
// The one-line description of a redistributable install (text and the script's comment).
std::string DescribeRedist(const redist::Request& r);
// NAME=VALUE words before a command; a name the shell would not read as an assignment goes through env(1)
// instead, so it can never become the command word.
std::string EnvPrefix(const Action& a);

}  // namespace gp::plan::detail
