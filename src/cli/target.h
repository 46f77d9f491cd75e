// What plan, apply and verify share: the stack (loaded and validated first, so a bad manifest exits 2
// before anything else happens) and the probed host (live, or the --root tree).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "apply/status.h"
#include "cli/context.h"
#include "manifest/loader.h"
#include "manifest/model.h"
#include "probe/host.h"

namespace gp::cli {

// The site file: a host's own stack file, used without --manifest before the stack apply recorded (read
// through the host's Fs: under --root, the tree's).
inline constexpr const char* kSiteFile = "/etc/gpuprep/site.yaml";

// Where a verb's stack came from, highest precedence first (docs/cli.md "Which stack"). ChooseStack is the
// one place the order lives: --manifest, then the site file, then the stack this host converged to, then the
// default for a host never applied.
enum class StackSource {
  kFlag,      // --manifest (apply --resume: the journal's)
  kSite,      // kSiteFile, when the host has one (its content must be the recorded stack's: LoadSiteStack)
  kRecorded,  // the stack apply recorded in /var/lib/gpuprep/status.json (apply/status.h ReadHostStack)
  kDefault,   // no record: manifest::ChooseDefaultStack for the probed host
};

struct Target {
  std::unique_ptr<sys::Fs> fs;  // the host ("/") or the --root tree
  probe::HostFacts facts;
  manifest::Stack stack;
  std::string manifest;  // the --manifest spec ("" when the stack was not named)
  std::string spec;      // how to load exactly this stack again: an embedded NAME, an absolute PATH, a URL
  StackSource source = StackSource::kDefault;
  std::optional<apply::HostStack> host_stack;  // this host's recorded stack (status.json), when it has one
  std::optional<manifest::Stack> host_stack_loaded;  // that stack, loaded, when it is not `stack` (a move)
};

// The probed host: the live "/" or the --root tree. With --root, nothing of the live host is run, loaded
// or contacted (no runner, dlopen or socket reach the probe).
struct ProbedHost {
  std::unique_ptr<sys::Fs> fs;
  probe::HostFacts facts;
};

// Probes the host per ctx.opts.root. Throws FlagError("--root") when the tree is not a directory.
ProbedHost ProbeTarget(Context& ctx);
// The same from files only (OS, GPUs, status.json): no command runs, no library is loaded, no socket is
// asked.
ProbedHost ProbeFiles(Context& ctx);
// Only what GPU health needs (probe::ProbeHealth), from the same seams as ProbeTarget.
ProbedHost ProbeHealthTarget(Context& ctx);
// On the live host with GPUs: the Xid history from the journal since `since` ("" = this boot), in place of
// the ring buffer's (probe::ProbeXidJournal). Nothing under --root.
void ReadXidJournal(Context& ctx, const sys::Fs& fs, const std::string& since, probe::HostFacts& facts);

// A LoadContext for reading `from`: this machine's files, plus an HttpClient (created into `http`, which
// must outlive the load) only when `from` is a URL, so commands that never download never load libcurl.
manifest::LoadContext ManifestLoadContext(Context& ctx, const manifest::ManifestSource& from,
                                          std::unique_ptr<sys::HttpClient>& http);

// The default stack for a probed host never applied: manifest::ChooseDefaultStack over its OS, GPU
// architectures and boards.
manifest::DefaultChoice DefaultStackFor(const probe::HostFacts& host);

// The host's recorded stack, loaded from its recorded manifest (files through `host`, the --root tree or
// "/"). Throws gp::Error(kExitUsage) with the command to move when it cannot be loaded as it was: no longer
// embedded, its file gone, or its content hash differs from the one apply recorded. A host never moves by
// itself.
manifest::Stack LoadHostStack(Context& ctx, sys::Fs& host, const apply::HostStack& hs);

// The host's site file (kSiteFile, read through `host`), loaded, or nullopt when the host has none. Throws
// gp::FileError for a bad file, and gp::Error(kExitUsage) with the commands to review and make the move when
// `recorded` (the host's recorded stack) has another content: a new or edited site file moves no host by
// itself.
std::optional<manifest::Stack> LoadSiteStack(sys::Fs& host, const std::optional<apply::HostStack>& recorded);
// The site file's path as a message names it: under a --root tree, the tree's.
std::string SitePath(const sys::Fs& host);

// Loads `manifest_spec` when given; else the stack ChooseStack picks for the probed host (the site file, else
// the recorded stack, else the default), saying which and why on stderr. Probes the host. Throws
// gp::FileError / gp::Error(kExitUsage) for manifest errors. On a live host, also asks the engine about the
// stack's image.
Target LoadTarget(Context& ctx, const std::string& manifest_spec);

// --manifest-sha256: the stack loaded from `manifest_spec` hashes to it (manifest::DocumentsSha256), else
// exit 2 naming the flag; without `manifest_spec` the flag is an error too (it pins the stack --manifest
// names).
void CheckManifestSha256(const Context& ctx, const std::string& manifest_spec, const manifest::Stack& stack);

// facts.docker.image for the stack's image as apply pulls it (digest, mirror), when the engine answered.
void ProbeStackImage(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts);

// --registry: `ref` read from its registry into facts.docker.image (probe::ProbeRegistryImage, with an
// HttpClient from ctx.make_http) unless the local engine has it. No-op for "" or "none".
void ReadImageFromRegistry(Context& ctx, const std::string& ref, probe::HostFacts& facts);
// The same for the stack's image as apply pulls it (pinned by digest, on its mirror).
void ReadStackImageFromRegistry(Context& ctx, const manifest::Stack& stack, probe::HostFacts& facts);

}  // namespace gp::cli
