#include "plan/repositories.h"

#include "apt/sources.h"
#include "util/input.h"

namespace gp::plan {
namespace {

// https, plain http only to a loopback host (decided on the parsed host, never a prefix), or a local
// file:/// mirror.
bool UrlAllowed(const std::string& url) {
  if (CheckUrl(url, UrlRule::kFetch).empty()) return true;
  auto u = ParseUrl(url);
  return u && u->scheme == "file";
}

}  // namespace

RepositorySetup PlanRepositories(const HostState& host,
                                 const std::vector<const manifest::AptRepository*>& repos,
                                 const std::string& stack) {
  RepositorySetup out;
  auto step = [&out](std::string id, std::string title) -> Step& {
    out.steps.push_back(Step{std::move(id), {}, std::move(title), {}});
    return out.steps.back();
  };
  for (const auto* r : repos) {
    auto found = host.repositories.find(r->list_path);
    const RepositoryFiles files = found == host.repositories.end() ? RepositoryFiles{} : found->second;
    if (!files.keyring) {
      if (r->key_fingerprint.empty() && r->keyring_sha256.empty()) {
        out.blockers.push_back("repository " + r->name + ": no key_fingerprint or keyring_sha256 pins " +
                               r->keyring_url + "; gpuprep will not install an unpinned key");
        continue;
      }
      if (!UrlAllowed(r->keyring_url)) {
        out.blockers.push_back("repository " + r->name + ": " + r->keyring_url +
                               " is not https (plain http and file:// only for loopback and local mirrors)");
        continue;
      }
      Action a;
      a.kind = Action::Kind::kFetch;
      a.url = r->keyring_url;
      a.path = r->keyring_path;
      a.sha256 = r->keyring_sha256;
      a.fingerprint = r->key_fingerprint;
      step("repo." + r->name + ".key", "repository " + r->name + ": fetch the signing key " + r->keyring_url +
                                           " and check its " +
                                           (r->keyring_sha256.empty() ? "fingerprint" : "sha256"))
          .actions.push_back(a);
    }
    const std::string want = apt::ListFileContents(*r, stack);
    const auto& have = files.list;
    if (!have || *have != want) {
      Step& s = step("repo." + r->name + ".list", "repository " + r->name + ": " + r->list_path);
      if (have) s.actions.push_back(Action::Move(r->list_path, r->list_path + ".gpuprep.bak"));
      s.actions.push_back(Action::Write(r->list_path, want, 0644, false));
    }
    const auto& conflicts = files.conflicts;
    if (!conflicts.empty()) {
      Step& s = step("repo." + r->name + ".conflicts",
                     "repository " + r->name + ": move aside lists that name it with another key");
      for (const auto& c : conflicts) s.actions.push_back(Action::Move(c.path, c.path + ".gpuprep.bak"));
    }
  }
  return out;
}

}  // namespace gp::plan
