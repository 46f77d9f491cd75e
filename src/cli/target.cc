#include "cli/target.h"

#include <spdlog/spdlog.h>

#include "docker/image_ref.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::cli {
manifest::LoadContext ManifestLoadContext(Context& ctx, const std::string& spec,
                                          std::unique_ptr<sys::HttpClient>& http) {
  manifest::LoadContext lc{ctx.local_fs, nullptr};
  if ((StartsWith(spec, "https://") || StartsWith(spec, "http://")) && ctx.make_http) {
    http = ctx.make_http();
    lc.http = http.get();
  }
  return lc;
}

manifest::DefaultChoice DefaultStackFor(const probe::HostFacts& host) {
  std::vector<std::string> archs;
  for (const auto& g : host.gpus)
    if (!g.architecture.empty()) archs.push_back(g.architecture);
  return manifest::ChooseDefaultStack(host.os.id, host.os.version_id, archs);
}

ProbedHost ProbeTarget(Context& ctx) {
  const bool live = ctx.opts.root.empty();
  ProbedHost p;
  p.fs = ctx.make_fs(ctx.opts.root);  // a relative --root is relative to the working directory
  if (!live && !p.fs->IsDir("/")) throw FlagError("--root", ctx.opts.root + ": not a directory");
  probe::ProbeEnv env;
  env.fs = p.fs.get();
  env.runner = live ? ctx.runner : nullptr;
  env.native = live ? ctx.native : nullptr;
  env.docker = live ? ctx.unix_http : nullptr;
  env.compat = &manifest::EmbeddedCompat();
  env.env = ctx.env;
  p.facts = probe::ProbeHost(env);
  return p;
}

void ProbeStackImage(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts) {
  std::string ref = docker::ImagePullReference(stack.image.ref, stack.image.digest, stack.image.mirror);
  if (ref.empty() || !facts.docker.engine_reachable) return;
  probe::ProbeEnv env;
  env.docker = ctx.unix_http;
  probe::ProbeImage(env, ref, facts);
  // Not there as pinned: is the tag there at another digest? (doctor says so instead of "not pulled")
  if (!facts.docker.image.present && ref != stack.image.ref) {
    probe::ImageInfo pinned = facts.docker.image;
    probe::ProbeImage(env, stack.image.ref, facts);
    if (!facts.docker.image.present) facts.docker.image = pinned;
  }
}

void ReadImageFromRegistry(Context& ctx, const std::string& ref, probe::HostFacts& facts) {
  probe::ImageInfo& image = facts.docker.image;
  if (ref.empty() || ref == "none" || (image.present && image.ref == ref)) return;
  if (!ctx.make_http) {
    image.ref = ref;
    image.registry_error = "no HTTP client";
    return;
  }
  std::unique_ptr<sys::HttpClient> http = ctx.make_http();
  probe::ProbeRegistryImage(*http, ref, facts.arch, image);
  if (!image.registry_error.empty()) spdlog::debug("registry: {}", image.registry_error);
}

void ReadStackImageFromRegistry(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts) {
  const std::string ref = docker::ImagePullReference(stack.image.ref, stack.image.digest, stack.image.mirror);
  if (facts.docker.image.present) return;  // the engine has it (maybe at another digest: doctor says so)
  ReadImageFromRegistry(ctx, ref, facts);
}

std::string ManifestOrSite(Context& ctx, const std::string& given) {
  if (!given.empty() || !ctx.local_fs || !ctx.local_fs->Exists(kSiteManifest)) return given;
  spdlog::info("using the site file {} (--manifest overrides it)", kSiteManifest);
  return kSiteManifest;
}

Target LoadTarget(Context& ctx, const std::string& given) {
  Target t;
  const std::string manifest_spec = ManifestOrSite(ctx, given);
  t.manifest = manifest_spec;
  std::unique_ptr<sys::HttpClient> http;
  if (!manifest_spec.empty()) t.stack = manifest::LoadStack(manifest_spec, ManifestLoadContext(ctx, manifest_spec, http));

  ProbedHost probed = ProbeTarget(ctx);
  t.fs = std::move(probed.fs);
  t.facts = std::move(probed.facts);

  if (manifest_spec.empty()) {
    auto choice = DefaultStackFor(t.facts);
    spdlog::info("using stack {}: {}", choice.name, choice.reason);
    t.stack = manifest::LoadStack(choice.name, ManifestLoadContext(ctx, choice.name, http));
  }
  if (ctx.opts.root.empty()) ProbeStackImage(ctx, t.stack, t.facts);
  return t;
}

}  // namespace gp::cli
