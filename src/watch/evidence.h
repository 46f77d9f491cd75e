// The numbers a verdict carries (docs/json.md, "verdict"): the evidence every verdict has, the phase
// split of the communication rule, and the number formats of the sentences that quote them.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "watch/window.h"

namespace gp::watch {

double RoundTo(double v, int digits);
// The value rounded to `digits`, or null.
nlohmann::ordered_json JsonNum(const std::optional<double>& v, int digits = 3);
std::string PctText(double v);                // "42%"
std::string FixedText(double v, int digits);  // "0.42"

// The evidence every verdict carries (null where not known), so scripts read one shape.
nlohmann::ordered_json BaseEvidence(const GpuWindow& w);
// The communication rule's phase split: samples and activity where the link is busy and where it is not.
nlohmann::ordered_json PhaseSplitJson(const PhaseSplit& p);

}  // namespace gp::watch
