// ProbeHost: runs the probe steps in order, each isolated so one broken file never hides the others.
#include "probe/probe.h"

#include <exception>
#include <utility>

#include "probe/steps.h"
#include "util/strings.h"

namespace gp::probe {

std::string EnvVar(const ProbeEnv& env, const std::string& name) {
  auto it = env.env.find(name);
  return it == env.env.end() ? std::string() : it->second;
}

const InstalledPackage* FindPackage(const HostFacts& facts, const std::string& name) {
  auto it = facts.packages.find(name);
  return it == facts.packages.end() ? nullptr : &it->second;
}

std::vector<std::string> CudaLibDirs(const HostFacts& facts) {
  if (facts.cuda.path.empty()) return {};
  return {facts.cuda.path + "/lib64", facts.cuda.path + "/lib"};
}

std::string ResolveLink(const std::string& link_path, const std::string& target) {
  if (!target.empty() && target[0] == '/') return target;
  auto slash = link_path.rfind('/');
  std::string dir = slash == std::string::npos || slash == 0 ? "" : link_path.substr(0, slash);
  return dir + "/" + target;
}

bool ExistsInRoot(const sys::Fs& fs, const std::string& path) {
  if (auto target = fs.ReadLink(path); target && !target->empty() && (*target)[0] == '/')
    return fs.Exists(*target);
  return fs.Exists(path);
}

std::string VarRun(const sys::Fs& fs, const std::string& rest) {
  if (auto target = fs.ReadLink("/var/run")) return ResolveLink("/var/run", *target) + rest;
  return "/var/run" + rest;
}

std::vector<std::string> DistInfoDirs(const ProbeEnv& env, const HostFacts& facts) {
  const sys::Fs& fs = *env.fs;
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (fs.IsDir(d)) out.push_back(d);
  };
  if (!facts.cuda.path.empty()) add(facts.cuda.path + "/dist-info");
  for (const char* lib : {"/usr/local/lib", "/usr/lib"}) {
    for (const auto& name : fs.List(lib)) {
      if (!StartsWith(name, "python3")) continue;
      add(std::string(lib) + "/" + name + "/dist-packages");
      add(std::string(lib) + "/" + name + "/site-packages");
    }
  }
  return out;
}

namespace {

using Step = void (*)(const ProbeEnv&, HostFacts&);

template <size_t N>
void RunSteps(const ProbeEnv& env, HostFacts& facts, const std::pair<const char*, Step> (&steps)[N]) {
  for (const auto& [name, step] : steps) {
    try {
      step(env, facts);
    } catch (const std::exception& e) {
      facts.probe_notes.push_back(std::string(name) + ": probe failed: " + e.what());
    }
  }
}

}  // namespace

HostFacts ProbeHost(const ProbeEnv& env) {
  HostFacts facts;
  facts.live = env.fs->IsLive();
  const std::pair<const char*, Step> steps[] = {
      {"os", ProbeOs},           {"gpu", ProbePci},
      {"dpkg", ProbeDpkg},       {"driver", ProbeDriver},
      {"kernels", ProbeKernels}, {"cuda", ProbeCuda},
      {"cudnn", ProbeCudnn},     {"nccl", ProbeNccl},
      {"docker", ProbeDocker},   {"services", ProbeServices},
      {"fabric", ProbeFabric},   {"identity", ProbeIdentity},
      {"xid", ProbeXid},         {"apt history", ProbeAptHistory},
      {"network", ProbeNetwork},
  };
  RunSteps(env, facts, steps);
  return facts;
}

HostFacts ProbeHealth(const ProbeEnv& env) {
  HostFacts facts;
  facts.live = env.fs->IsLive();
  const std::pair<const char*, Step> steps[] = {{"os", ProbeOs},
                                                {"gpu", ProbePci},
                                                {"driver", ProbeDriver},
                                                {"services", ProbeServices},
                                                {"identity", ProbeIdentity},
                                                {"xid", ProbeXid}};
  RunSteps(env, facts, steps);
  return facts;
}

}  // namespace gp::probe
