// What plan, apply and verify share: the stack (loaded and validated first, so a bad manifest exits 2
// before anything else happens) and the probed host (live, or the --root tree).
#pragma once
#include <memory>
#include <string>

#include "cli/context.h"
#include "manifest/loader.h"
#include "manifest/model.h"
#include "probe/host.h"

namespace gp::cli {

struct Target {
  std::unique_ptr<sys::Fs> fs;   // the host ("/") or the --root tree
  probe::HostFacts facts;
  manifest::Stack stack;
  std::string manifest;          // the --manifest spec ("" when the default was chosen)
};

// The probed host: the live "/" or the --root tree. With --root, nothing of the live host is run, loaded
// or contacted (no runner, dlopen or socket reach the probe).
struct ProbedHost {
  std::unique_ptr<sys::Fs> fs;
  probe::HostFacts facts;
};

// Probes the host per ctx.opts.root. Throws FlagError("--root") when the tree is not a directory.
ProbedHost ProbeTarget(Context& ctx);

// A LoadContext for reading `spec`: this machine's files, plus an HttpClient (created into `http`, which
// must outlive the load) only when `spec` is a URL, so commands that never download never load libcurl.
manifest::LoadContext ManifestLoadContext(Context& ctx, const std::string& spec,
                                          std::unique_ptr<sys::HttpClient>& http);

// The default stack for a probed host: manifest::ChooseDefaultStack over its OS and GPU architectures.
manifest::DefaultChoice DefaultStackFor(const probe::HostFacts& host);

// The site file: when it exists on the machine gpuprep runs on, it is the default --manifest of every verb.
inline constexpr const char* kSiteManifest = "/etc/gpuprep/site.yaml";

// The manifest a verb reads: `given` (--manifest, or what a resumed run recorded) when set, else the site
// file when it exists (said on stderr), else "" (the default stack for the host is chosen).
std::string ManifestOrSite(Context& ctx, const std::string& given);

// Loads the manifest ManifestOrSite(ctx, given) names (when none: the default stack for the probed host,
// saying which and why on stderr) and probes the host. Throws gp::FileError / gp::Error(kExitUsage)
// for manifest errors.
// On a live host, LoadTarget also asks the engine about the stack's image (ProbeStackImage).
Target LoadTarget(Context& ctx, const std::string& given);

// facts.docker.image for the stack's image as apply pulls it (digest, mirror), when the engine answered.
void ProbeStackImage(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts);

// --registry: `ref` read from its registry into facts.docker.image (probe::ProbeRegistryImage, with an
// HttpClient from ctx.make_http) unless the local engine has it. No-op for "" or "none".
void ReadImageFromRegistry(Context& ctx, const std::string& ref, probe::HostFacts& facts);
// The same for the stack's image as apply pulls it (pinned by digest, on its mirror).
void ReadStackImageFromRegistry(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts);

}  // namespace gp::cli
