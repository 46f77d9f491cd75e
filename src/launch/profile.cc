// Profile YAML -> launch::Profile. The document is read by manifest/profile.cc (the same strict YAML
// front end as stacks); every error points at the offending value (PATH:LINE:COL).
#include "launch/profile.h"

#include "manifest/profile.h"
#include "sys/fs.h"
#include "sys/fs_errors.h"
#include "util/embedded.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::launch {
namespace {
constexpr const char* kPrefix = "manifests/profiles/";
}  // namespace

Profile ParseProfile(const std::string& text, const std::string& display_path) {
  manifest::ProfileDoc d = manifest::ParseProfileDoc(text, display_path);
  Profile p;
  p.name = std::move(d.name);
  p.description = std::move(d.description);
  p.image = std::move(d.image);
  p.ipc = std::move(d.ipc);
  p.shm = std::move(d.shm);
  p.shm_per_gpu = d.shm_per_gpu;
  p.dataloader_heavy = d.dataloader_heavy;
  p.workdir = std::move(d.workdir);
  for (auto& m : d.mounts) p.mounts.push_back(Mount{std::move(m.source), std::move(m.target), m.read_only});
  p.env = std::move(d.env);
  p.ports = std::move(d.ports);
  return p;
}

std::vector<std::string> EmbeddedProfileNames() {
  std::vector<std::string> names;
  for (const EmbeddedFile* f : ListEmbedded(kPrefix)) {
    std::string n = std::string(f->path).substr(std::string(kPrefix).size());
    if (EndsWith(n, ".yaml")) names.push_back(n.substr(0, n.size() - 5));
  }
  return names;
}

Profile LoadProfile(const std::string& spec, const sys::Fs& fs) {
  const bool is_path =
      spec.find('/') != std::string::npos || EndsWith(spec, ".yaml") || EndsWith(spec, ".yml");
  if (!is_path) {
    const EmbeddedFile* f = FindEmbedded(std::string(kPrefix) + spec + ".yaml");
    if (!f) {
      const auto names = EmbeddedProfileNames();
      std::string msg = "unknown profile \"" + spec + "\"";
      if (auto guess = DidYouMean(spec, names))
        msg += " (did you mean \"" + *guess + "\"?)";
      else
        msg += " (profiles: " + Join(names, ", ") + ")";
      throw FlagError("--profile", msg);
    }
    Profile p = ParseProfile(std::string(f->data, f->size), f->path);
    p.source = "embedded:" + spec;
    return p;
  }
  auto text = fs.Read(spec);
  if (!text) throw FlagError("--profile", sys::WhyUnreadable(fs, spec, spec));
  Profile p = ParseProfile(*text, spec);
  p.source = spec;
  return p;
}

}  // namespace gp::launch
