// The planner's test host: a bare GPU host under a TempRoot, the test stack, and what a converged host looks
// like on disk; planned as `gpuprep plan` (offline) or `gpuprep apply` (with the repository's index).
#pragma once
#include <map>
#include <string>

#include "apply/harness.h"
#include "apt/index.h"
#include "apt/preferences.h"
#include "apt/sources.h"
#include "plan/planner.h"
#include "support/plan_host.h"

namespace gp::test {

struct PlannerFixture {
  TempRoot root;
  manifest::Stack stack = test::TestStack();
  probe::HostFacts facts = test::BareHost();
  plan::PlanInput in;
  PlannerFixture() {
    stack.repositories[0].keyring_sha256 = std::string(64, 'a');
    in.stack = &stack;
    in.facts = &facts;
  }
  plan::Plan BuildOffline() { return test::PlanHost(in, root.fs()); }
  // As `gpuprep apply` plans: when the host's lists cannot resolve the pins, with the repository's index
  // as apply's preflight reads it.
  plan::Plan Build() {
    auto p = test::PlanHost(in, root.fs());
    return p.needs_index ? BuildResolved() : p;
  }
  plan::Plan BuildResolved() {
    index = apt::Index();
    apt::ParsePackages(test::RepoPackages(stack), "amd64", index);
    in.index = &index;
    auto p = test::PlanHost(in, root.fs());
    in.index = nullptr;
    return p;
  }
  apt::Index index;

  // The pins gpuprep writes for the stack, each naming its layer.
  std::map<std::string, apt::Pin> Pins() const {
    std::map<std::string, apt::Pin> pins;
    for (const auto& p : stack.driver.packages) pins[p.name] = {p.version, {"driver"}};
    for (const auto& [layer, c] :
         {std::pair<const char*, const manifest::ComponentSpec*>{"cuda", &stack.cuda},
          {"cudnn", &stack.cudnn},
          {"nccl", &stack.nccl}})
      for (const auto& p : c->packages) pins[p.name] = {p.version, {layer}};
    return pins;
  }

  // What a converged host looks like on disk.
  void Converge() {
    std::string status;
    for (const auto& p : stack.driver.packages) status += test::DpkgStanza(p.name, p.version);
    for (const auto* c : {&stack.cuda, &stack.cudnn, &stack.nccl})
      for (const auto& p : c->packages) status += test::DpkgStanza(p.name, p.version);
    root.Write("/var/lib/dpkg/status", status);
    root.Write(stack.repositories[0].keyring_path, "key");
    root.Write(stack.repositories[0].list_path, apt::ListFileContents(stack.repositories[0], stack.name));
    root.Write("/var/lib/apt/lists/repo.example_cuda_Packages", test::RepoPackages(stack));
    root.Write(apt::kPreferencesPath, apt::PreferencesContents(stack.name, Pins()));
    root.Write("/etc/modprobe.d/blacklist-nouveau.conf", plan::kNouveauBlacklist);
    root.Write("/proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
    root.Symlink("/lib/systemd/system/nvidia-persistenced.service",
                 "/etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service");
    facts.driver.nouveau_loaded = false;
    facts.driver.kernel_headers = true;
    facts.driver.module.loaded = true;
    facts.driver.module.version = "535.129.03";
  }
};

}  // namespace gp::test
