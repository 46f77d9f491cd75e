// The burn's verdicts (docs/accept.md, "The burn"): each GPU's small product against the CPU's, each GPU's
// products against its own first, and the first products of GPUs with the same SM count against each other,
// all by the program's exact digests. Pure: a recording in, checks out.
#pragma once
#include <vector>

#include "accept/judge.h"
#include "accept/record.h"

namespace gp::accept {

// The burn's checks (group "burn"): the digests and CPU checks of the burn records, and the clocks, reasons
// and Xids of the burn_clocks records; none when the recording holds neither.
std::vector<Check> BurnChecks(const Recording& rec);

}  // namespace gp::accept
