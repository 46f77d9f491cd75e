// The `docker:` section of a stack:
//   docker:
//     engine: docker.io          # or docker-ce (Docker's own repository: list it under repositories)
//     packages: [{name: docker.io}]
//     gpu_access: runtime        # or cdi (Docker >= 25, the toolkit's CDI spec)
//     default_runtime: false
//     toolkit_mode: legacy       # or jit-cdi (toolkit >= 1.18); absent: the toolkit's own default
#include "manifest/fields.h"
#include "manifest/stack_parse.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

std::string Choice(const Node& n, const std::vector<std::string>& allowed, const std::string& what) {
  std::string v = AsString(n);
  for (const auto& a : allowed)
    if (v == a) return v;
  Fail(n.mark, "unknown " + what + " " + QuoteToken(v) + " (expected one of: " + Join(allowed, ", ") + ")");
}

}  // namespace

void ParseDocker(const Node& n, Stack& s) {
  Fields f(n, "docker", &s.origins);
  f.Only({"engine", "packages", "gpu_access", "default_runtime", "toolkit_mode"});
  DockerSpec& d = s.docker;
  d.present = true;
  if (const Node* e = f.Get("engine")) d.engine = Choice(*e, {"docker.io", "docker-ce"}, "docker engine");
  // No version: the distribution's package by name (docker.io). version/upstream: pinned through the
  // resolver like NVIDIA's (Docker's own repository, listed under repositories with its key pinned).
  if (const Node* p = f.Get("packages")) d.packages = ParsePackages(*p, "docker.packages");
  if (d.packages.empty()) d.packages.push_back({d.engine, "", ""});
  if (const Node* g = f.Get("gpu_access")) d.gpu_access = Choice(*g, {"runtime", "cdi"}, "gpu_access");
  d.default_runtime = f.Bool("default_runtime").value_or(false);
  if (const Node* m = f.Get("toolkit_mode")) {
    d.toolkit_mode = Choice(*m, {"legacy", "jit-cdi"}, "toolkit_mode");
    // Toolkit 1.18.0 introduced the just-in-time CDI mode (and made it the default); before it, the
    // runtime's only modes were legacy and a pre-generated CDI spec.
    const Pinned& tv = s.container_toolkit.version;
    if (d.toolkit_mode == "jit-cdi" && tv.known() && *tv.version < Version::Must("1.18.0"))
      Fail(m->mark, "toolkit_mode jit-cdi needs container toolkit 1.18.0 or later; the stack pins " +
                        tv.version->str());
  }
  if (d.gpu_access == "cdi" && d.default_runtime)
    Fail(f.node().Find("default_runtime")->mark,
         "default_runtime sets the nvidia runtime as Docker's default; with gpu_access: cdi Docker reaches "
         "the GPUs "
         "without it");
}

}  // namespace gp::manifest
