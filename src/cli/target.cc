#include "cli/target.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "docker/image_ref.h"
#include "layers/task.h"
#include "manifest/digest.h"
#include "manifest/loader.h"
#include "probe/probe.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::cli {
manifest::LoadContext ManifestLoadContext(Context& ctx, const manifest::ManifestSource& from,
                                          std::unique_ptr<sys::HttpClient>& http) {
  manifest::LoadContext lc{ctx.local_fs, nullptr};
  if (from.url() && ctx.make_http) {
    http = ctx.make_http();
    lc.http = http.get();
  }
  return lc;
}

manifest::DefaultChoice DefaultStackFor(const probe::HostFacts& host) {
  return manifest::ChooseDefaultStack(verdict::HostQueryFor(manifest::EmbeddedHostCompat(), host));
}

namespace {

std::string ShortHash(const std::string& h) { return h.size() > 19 ? h.substr(0, 19) + "..." : h; }

// How to load `s`, loaded from `from`, again: its embedded name, the absolute path, or the URL.
std::string SpecOf(const manifest::Stack& s, const manifest::ManifestSource& from) {
  return from.embedded() ? s.name : from.value;
}

std::string RecordedWhat(const apply::HostStack& hs) {
  return hs.converged ? "the stack this host converged to" : "the stack the last apply on this host ran";
}

// The stack of a verb run without --manifest, in the order of StackSource.
void ChooseStack(Context& ctx, Target& t) {
  if (auto site = LoadSiteStack(*t.fs, t.host_stack)) {
    t.stack = std::move(*site);
    t.spec = kSiteFile;
    t.source = StackSource::kSite;
    spdlog::info("using stack {}: the site file {}{}; another stack only with --manifest", t.stack.name,
                 TerminalSafe(SitePath(*t.fs)),
                 t.host_stack ? ", with the content of " + RecordedWhat(*t.host_stack) : std::string());
    return;
  }
  if (t.host_stack) {
    t.stack = LoadHostStack(ctx, *t.fs, *t.host_stack);
    t.spec = t.host_stack->record.manifest;
    t.source = StackSource::kRecorded;
    spdlog::info("using stack {}: {} ({}); another stack only with --manifest", t.stack.name,
                 RecordedWhat(*t.host_stack), apply::kStatusPath);
    return;
  }
  auto choice = DefaultStackFor(t.facts);
  spdlog::info("using stack {}: {}", choice.name, choice.reason);
  t.stack = manifest::LoadStack(choice.name, manifest::LoadContext{ctx.local_fs, nullptr});
  t.spec = choice.name;
  t.source = StackSource::kDefault;
}

}  // namespace

manifest::Stack LoadHostStack(Context& ctx, sys::Fs& host, const apply::HostStack& hs) {
  const apply::StackRecord& r = hs.record;
  const std::string& m = r.manifest;
  const std::string what = "this host's stack " + r.stack + (m != r.stack ? " (" + m + ")" : "") +
                           ", recorded in " + apply::kStatusPath + ",";
  if (manifest::ShapeOf(m) == manifest::SourceShape::kName) {
    const auto names = manifest::EmbeddedStackNames();
    if (std::find(names.begin(), names.end(), m) == names.end())
      throw UsageError(what +
                       " is not embedded in this gpuprep; gpuprep does not pick another stack by itself: "
                       "choose one with --manifest (gpuprep manifest list)");
  }
  std::unique_ptr<sys::HttpClient> http;
  manifest::Stack s;
  try {
    const manifest::ManifestSource from = manifest::ParseManifestSource(m, &host);
    manifest::LoadContext lc{&host, nullptr};
    if (from.url() && ctx.make_http) {
      http = ctx.make_http();
      lc.http = http.get();
    }
    s = manifest::LoadStack(from, lc);
  } catch (const Error& e) {
    throw UsageError(what + " cannot be loaded (" + e.what() + "); name the stack to use with --manifest");
  }
  if (r.content_hash.empty()) {
    spdlog::info("{} was recorded by an earlier gpuprep, without a content hash: taking it as it is now",
                 r.stack);
    return s;
  }
  const std::string now = manifest::ContentHash(s);
  if (now != r.content_hash)
    throw UsageError(what + " has changed since apply recorded it (content " + ShortHash(r.content_hash) +
                     ", now " + ShortHash(now) +
                     "); gpuprep does not move a host by itself: review the change with "
                     "`gpuprep plan --manifest " +
                     m + "`, make it with `sudo gpuprep apply --manifest " + m + " --yes`");
  return s;
}

std::string SitePath(const sys::Fs& host) {
  // Under --root the files are the tree's: messages name them there, not as this machine's own /etc.
  std::string under = host.HostPath("/");
  while (!under.empty() && under.back() == '/') under.pop_back();
  return under + kSiteFile;
}

std::optional<manifest::Stack> LoadSiteStack(sys::Fs& host, const std::optional<apply::HostStack>& recorded) {
  if (!host.Exists(kSiteFile)) return std::nullopt;
  std::string under = host.HostPath("/");
  while (!under.empty() && under.back() == '/') under.pop_back();
  manifest::Stack s;
  try {
    s = manifest::LoadStack(kSiteFile, manifest::LoadContext{&host, nullptr});
  } catch (const Error& e) {
    const std::string what = e.what();
    if (under.empty() || !StartsWith(what, "/")) throw;
    throw Error(e.code(), under + what);
  }
  if (!recorded || recorded->record.content_hash.empty()) return s;
  const std::string now = manifest::ContentHash(s);
  const apply::StackRecord& r = recorded->record;
  if (now == r.content_hash) return s;
  const std::string site = under + kSiteFile;
  throw UsageError("the site file " + site + " (stack " + s.name + ", content " + ShortHash(now) +
                   ") is not " + RecordedWhat(*recorded) + ", " + r.stack + " (content " +
                   ShortHash(r.content_hash) + ", recorded in " + apply::kStatusPath +
                   "); gpuprep does not move a host by itself: review the " +
                   "change with `gpuprep plan --manifest " + site +
                   "`, make it with `sudo gpuprep apply --manifest " + site + " --yes`");
}

namespace {

ProbedHost Probe(Context& ctx, bool files_only,
                 probe::HostFacts (*probe_host)(const probe::ProbeEnv&) = probe::ProbeHost) {
  const bool live = ctx.opts.root.empty() && !files_only;
  ProbedHost p;
  p.fs = ctx.make_fs(ctx.opts.root);  // a relative --root is relative to the working directory
  if (!ctx.opts.root.empty() && !p.fs->IsDir("/"))
    throw FlagError("--root", ctx.opts.root + ": not a directory");
  probe::ProbeEnv env;
  env.fs = p.fs.get();
  env.runner = live ? ctx.runner : nullptr;
  env.native = live ? ctx.native : nullptr;
  env.docker = live ? ctx.unix_http : nullptr;
  env.compat = &manifest::EmbeddedHostCompat();
  env.env = ctx.env;
  p.facts = probe_host(env);
  return p;
}

}  // namespace

ProbedHost ProbeTarget(Context& ctx) { return Probe(ctx, false); }
ProbedHost ProbeFiles(Context& ctx) { return Probe(ctx, true); }
ProbedHost ProbeHealthTarget(Context& ctx) { return Probe(ctx, false, probe::ProbeHealth); }

void ReadXidJournal(Context& ctx, const sys::Fs& fs, const std::string& since, probe::HostFacts& facts) {
  if (!ctx.opts.root.empty() || facts.gpus.empty()) return;
  probe::ProbeEnv env;
  env.runner = ctx.runner;
  env.fs = &fs;
  probe::ProbeXidJournal(env, since, facts);
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

// --manifest-sha256: the loaded stack's documents hash to it (manifest::DocumentsSha256), else exit 2.
void CheckManifestSha256(const Context& ctx, const std::string& manifest_spec, const manifest::Stack& stack) {
  const std::string& want = ctx.opts.manifest_sha256;
  if (want.empty()) return;
  if (manifest_spec.empty())
    throw FlagError("--manifest-sha256", "pins the stack --manifest names; give --manifest too");
  const bool hex = want.size() == 64 && std::all_of(want.begin(), want.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) throw FlagError("--manifest-sha256", "must be 64 lower-case hex digits (a sha256)");
  const std::string got = manifest::DocumentsSha256(stack);
  if (got != want)
    throw FlagError("--manifest-sha256",
                    "the stack " + TerminalSafe(manifest_spec) + " now has sha256 " + got + ", not " + want +
                        ": it changed since the plan was made; make and review a new plan");
}

Target LoadTarget(Context& ctx, const std::string& manifest_spec) {
  Target t;
  t.manifest = manifest_spec;
  std::unique_ptr<sys::HttpClient> http;
  if (!manifest_spec.empty()) {
    const manifest::ManifestSource from = manifest::ParseManifestSource(manifest_spec, ctx.local_fs);
    t.stack = manifest::LoadStack(from, ManifestLoadContext(ctx, from, http));
    (void)layers::StackTask(t.stack);                  // a bad workload.task stops here (exit 2)
    CheckManifestSha256(ctx, manifest_spec, t.stack);  // before anything is probed or planned
    t.spec = SpecOf(t.stack, from);
    t.source = StackSource::kFlag;
  } else {
    CheckManifestSha256(ctx, manifest_spec, t.stack);
  }

  ProbedHost probed = ProbeTarget(ctx);
  t.fs = std::move(probed.fs);
  t.facts = std::move(probed.facts);

  if (manifest_spec.empty()) {
    t.host_stack = apply::ReadHostStack(*t.fs);  // a malformed record stops here: no silent move
    ChooseStack(ctx, t);
    (void)layers::StackTask(t.stack);
  } else {
    try {
      t.host_stack = apply::ReadHostStack(*t.fs);
      // --manifest names another stack than the host's: plan shows what the move changes.
      if (t.host_stack && t.host_stack->record.manifest != t.spec)
        t.host_stack_loaded = LoadHostStack(ctx, *t.fs, *t.host_stack);
    } catch (const Error& e) {
      spdlog::debug("the host's recorded stack: {}", e.what());
    }
  }
  if (ctx.opts.root.empty()) ProbeStackImage(ctx, t.stack, t.facts);
  return t;
}

}  // namespace gp::cli
