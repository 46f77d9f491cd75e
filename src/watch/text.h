// watch's text output (without --json): one block per verdict as windows close, the summary at the end.
// Times are UTC. Values quoted from the host (process names) go through TerminalSafe.
#pragma once
#include <string>

#include "watch/verdict.h"

namespace gp::watch {

std::string RenderVerdictText(const Verdict& v);
std::string RenderSummaryText(const Summary& s);

}  // namespace gp::watch
