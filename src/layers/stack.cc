// stack row (doctor's first): the stack the report checks against, and whether gpuprep embeds a newer one for
// this host. A newer stack is a warning, never a move: the host stays on its stack until an explicit
// `apply --manifest NEW` (a converged host's stack is its recorded one, cli/target.h).
//
// The host's stack is compared by content (manifest/digest.h): an embedded stack, or a site file that only
// moves its repositories, is the embedded stack with that content; a site file pinning other versions is its
// own and is not compared. "Newer" is the default choice for a host never applied
// (manifest::ChooseDefaultStack: long-term-support first, then newest CUDA and driver) when it ranks above
// the host's stack and pins no older driver or CUDA than it (a host on a newer production-branch stack is not
// sent back to the long-term-support default).
#include <stdexcept>

#include "layers/check.h"
#include "manifest/digest.h"
#include "manifest/loader.h"
#include "util/error.h"
#include "verdict/rules.h"

namespace gp::layers {
namespace {

// A board of this host the stack claims but one of its pinned libraries carries no code for (compat.yaml
// library_builds): a warning per board, whatever the stack's rank.
void CheckLibraries(const CheckInput& in, LayerReport& r) {
  for (const manifest::GpuModel* m : HostGpuModels(in.compat, in.host)) {
    if (!in.stack.Claims(*m)) continue;  // the gpu row says the stack is not made for it
    const std::string why = manifest::LibraryCannotRun(in.compat, in.stack, *m);
    if (!why.empty())
      r.Add("stack.library-unsupported-board", Status::kWarn,
            "stack " + in.stack.name + " claims " + m->name + " (" + m->arch + ") but " + why,
            "choose a stack whose libraries run on it: gpuprep manifest list");
  }
}

// Whether `a` pins an older driver or an older CUDA than `b` (what is unknown is not compared): a stack the
// default choice ranks above another for its long-term-support branch is no newer one when it would take the
// host back to an older driver or CUDA.
bool OlderThan(const manifest::Stack& a, const manifest::Stack& b) {
  auto older = [](const manifest::Pinned& x, const manifest::Pinned& y) {
    return x.known() && y.known() && *x.version < *y.version;
  };
  return older(a.driver.version, b.driver.version) || older(a.cuda.version, b.cuda.version);
}

std::string Pins(const manifest::Stack& s) {
  auto v = [](const manifest::Pinned& p) { return p.known() ? p.version->str() : std::string("unknown"); };
  return "driver " + v(s.driver.version) + ", CUDA " + v(s.cuda.version);
}

// The host's stack (the embedded `same`) against `def`, gpuprep's choice for a new host like it; `site` is
// the site file the host's stack is, if any.
void CompareWithDefault(const std::string& same, const std::string& def, const std::string& site,
                        LayerReport& r) {
  if (same == def) {
    r.Add("stack.current", Status::kOk, same + " is the stack gpuprep picks for a new host like this one");
    return;
  }
  const manifest::Stack have = manifest::LoadStack(same, manifest::LoadContext{});
  const manifest::Stack newer = manifest::LoadStack(def, manifest::LoadContext{});
  if (!manifest::RanksAbove(newer, have)) {
    r.Add("stack.chosen", Status::kOk,
          same + (manifest::RanksAbove(have, newer) ? " ranks above " : " ranks level with ") + def +
              ", gpuprep's choice for a new host like this one");
    return;
  }
  if (OlderThan(newer, have)) {  // e.g. an R595 stack against the long-term-support R580 default
    r.Add("stack.chosen", Status::kOk,
          same + " (" + Pins(have) + ") is newer than " + def + " (" + Pins(newer) +
              "), gpuprep's choice for a new host like this one, which prefers a long-term-support driver "
              "branch");
    return;
  }
  const bool reboot = !(have.driver.version.known() && newer.driver.version.known() &&
                        *have.driver.version.version == *newer.driver.version.version);
  // A host whose stack is its site file moves by editing it (else the next run without --manifest refuses).
  const std::string& target = site.empty() ? def : site;
  r.Add("stack.newer-available", Status::kWarn,
        "a newer stack exists for this host: " + def + " (" + Pins(newer) + "; this host's " + same + ": " +
            Pins(have) + "); the host stays on its stack until moved",
        (site.empty() ? "" : "make " + site + " extend " + def + " instead of " + same + "; ") +
            "review the move with: gpuprep plan --manifest " + target +
            "; make it with: sudo gpuprep apply --manifest " + target + " --yes" +
            (reboot ? " (the driver changes: one reboot)" : ""));
}

}  // namespace

LayerReport CheckStack(const CheckInput& in) {
  LayerReport r;
  r.name = "stack";
  const manifest::Stack& s = in.stack;
  CheckLibraries(in, r);
  std::optional<std::string> same;
  try {
    same = manifest::EmbeddedIdentity(s);
  } catch (const std::runtime_error& e) {  // no libcrypto to hash a site file with
    r.found = s.name;
    r.Add("stack.unhashed", Status::kSkip,
          std::string("cannot compare stack ") + s.name + " with the embedded ones: " + e.what());
    return r;
  }
  r.found = s.name + (same && *same != s.name ? " (the content of " + *same + ")" : "");
  manifest::DefaultChoice def;
  try {
    def = manifest::ChooseDefaultStack(HostQueryFor(in.compat, in.host));
  } catch (const Error& e) {
    r.Add("stack.no-default", Status::kSkip, e.what());
    return r;
  }
  r.wanted = def.name;
  if (!same) {
    r.Add("stack.own-pins", Status::kOk,
          "stack " + s.name +
              " pins versions of its own (no embedded stack has its content): not compared with " + def.name +
              ", gpuprep's choice for a new host like this one");
    return r;
  }
  CompareWithDefault(*same, def.name, in.site_file, r);
  return r;
}

}  // namespace gp::layers
