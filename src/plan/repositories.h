// The repository setup of a plan, as a value: for each of the stack's apt repositories the steps that fetch
// its pinned signing key, write its list file and move aside lists that name it with another key; a key
// gpuprep cannot pin or fetch safely is a blocker instead.
#pragma once
#include <string>
#include <vector>

#include "manifest/model.h"
#include "plan/host_state.h"
#include "plan/plan.h"

namespace gp::plan {

struct RepositorySetup {
  std::vector<Step> steps;
  std::vector<std::string> blockers;
};

RepositorySetup PlanRepositories(const HostState& host,
                                 const std::vector<const manifest::AptRepository*>& repos,
                                 const std::string& stack);

}  // namespace gp::plan
