// The verdict rules: one window of samples in, at most one verdict per GPU (or per MIG instance) out,
// each with its evidence, a confidence and the standard fix. Pure and deterministic: the same samples give
// the same verdicts live and on replay. The rules, their order and every threshold are in docs/watch.md.
#pragma once
#include <vector>

#include "watch/sample.h"
#include "watch/thresholds.h"
#include "watch/verdict.h"

namespace gp::watch {

// Judges the window [start_ms, end_ms) from its samples (all with the same GPUs in the same order).
// GPUs lost in the window get no verdict; a GPU (or MIG instance) no rule fits gets an "unclassified" one
// that names the rule that came closest and the conditions it failed, with their numbers.
std::vector<Verdict> JudgeWindow(const std::vector<Sample>& samples, long long start_ms, long long end_ms,
                                 const Thresholds& t);

// The standard fix for each verdict (throttled: per reason, joined).
std::string FixFor(VerdictKind kind, const std::vector<std::string>& reasons = {});

}  // namespace gp::watch
