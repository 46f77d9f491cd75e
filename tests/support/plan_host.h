// A plan as `gpuprep plan` makes it: the host state read from the tree now, then the plan of its values.
#pragma once
#include "host/files.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "plan/planner.h"
#include "sys/fs.h"

namespace gp::test {

inline plan::Plan PlanHost(plan::PlanInput in, const sys::Fs& fs) {
  const plan::HostState host =
      host::ReadFiles(fs, *in.stack, *in.facts, layers::HostReads(*in.stack, *in.facts));
  in.host = &host;
  return layers::BuildPlan(in);
}

}  // namespace gp::test
