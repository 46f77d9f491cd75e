// `gpuprep launch`: a validated run configuration for this host or a saved host snapshot (docs/cli.md).
// Flags -> LaunchRequest; host (probe or --host) + stack + profile -> launch::Resolve -> one renderer.
// Nothing reaches stdout unless the whole config validated and rendered.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <ostream>

#include "apply/status.h"
#include "cli/commands.h"
#include "cli/target.h"
#include "docker/image_ref.h"
#include "launch/driver_check.h"
#include "launch/profile.h"
#include "launch/render.h"
#include "launch/resolve.h"
#include "launch/target.h"
#include "launch/validate.h"
#include "manifest/loader.h"
#include "probe/host_json.h"
#include "probe/probe.h"
#include "sys/fs.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

struct LaunchFlags {
  std::vector<std::string> hosts;  // --host, repeated: one snapshot, or one per node in rank order
  std::string profile, image, gpus, shm, ipc, workdir, name, master, rdma_resource, format = "docker";
  int nodes = 1, node_rank = 0;
  std::vector<std::string> volumes, envs, command;
  bool interactive = false;
  bool registry = false;  // --registry: read the image's CUDA from its registry when the engine lacks it
  std::map<std::string, CLI::Option*> opts;  // to tell "given" from "default"
  bool Given(const std::string& flag) const {
    auto it = opts.find(flag);
    return it != opts.end() && it->second->count() > 0;
  }
};

// Every --host snapshot, validated (a bad one is FILE:LINE:COL). One is the host the launch is for; several
// are one per node, in rank order, and two of them may not be the same machine. Relative paths are the
// user's working directory, not the Fs root.
std::vector<launch::Target> LoadSnapshots(const LaunchFlags& f, Context& ctx) {
  std::vector<launch::Target> nodes;
  for (const std::string& path : f.hosts) {
    std::string why;
    auto text =
        sys::ReadWithin(*ctx.local_fs, sys::AbsoluteFromCwd(path), path, probe::kMaxSnapshotBytes, why);
    if (!text) throw FlagError("--host", why);
    nodes.push_back(launch::TargetFromSnapshot(*text, path));
  }
  if (nodes.size() < 2) return nodes;
  const size_t want = f.Given("--nodes") ? static_cast<size_t>(std::max(f.nodes, 1)) : 1;
  if (nodes.size() != want)
    throw FlagError("--host", std::to_string(nodes.size()) + " snapshots for " +
                                  (f.Given("--nodes") ? "--nodes " + std::to_string(f.nodes) : "one node") +
                                  ": give one for the host the launch is for, or one per node in rank order");
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (f.hosts[k] == f.hosts[i] ||
          (!nodes[i].host.machine_id.empty() && nodes[i].host.machine_id == nodes[k].host.machine_id))
        throw FlagError("--host",
                        f.hosts[k] + " and " + f.hosts[i] + " are the same machine" +
                            (f.hosts[k] == f.hosts[i] ? std::string()
                                                      : " (machine-id " + nodes[i].host.machine_id + ")") +
                            ": give one snapshot per node");
  return nodes;
}

// The host the command is for: the snapshot of --node-rank (the first node's for a text every node shares),
// the one snapshot given, or this host probed.
launch::Target LoadTarget(const LaunchFlags& f, const std::vector<launch::Target>& nodes, Context& ctx,
                          std::unique_ptr<sys::Fs>& probe_fs, size_t& index) {
  index = 0;
  if (nodes.size() == 1) return nodes[0];
  if (!nodes.empty()) {
    const bool shared = f.format == "slurm" || f.format == "k8s";
    const int rank = shared || !f.Given("--node-rank") ? 0 : f.node_rank;
    if (rank < 0 || rank >= static_cast<int>(nodes.size()))
      throw FlagError("--node-rank", std::to_string(rank) + " is not below --nodes " +
                                         std::to_string(f.nodes) + " (ranks are 0.." +
                                         std::to_string(f.nodes - 1) + ")");
    index = static_cast<size_t>(rank);
    return nodes[index];
  }
  ProbedHost probed = ProbeTarget(ctx);
  probe_fs = std::move(probed.fs);
  launch::Target t;
  t.host = std::move(probed.facts);
  return t;
}

// This host's /etc/machine-id (32 hex digits), "" when unknown or not the live host.
std::string LiveMachineId(Context& ctx) {
  if (!ctx.opts.root.empty()) return "";
  auto id = ctx.local_fs->ReadPrefix("/etc/machine-id", 128);
  if (!id) return "";
  const std::string s(Trim(*id));
  const bool hex = s.size() == 32 && std::all_of(s.begin(), s.end(), [](char ch) {
                     return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
                   });
  return hex ? s : "";
}

// --manifest, else the stack doctor used for the snapshot, else the probed host's site file, else its
// recorded stack (status.json), else the default for the host's OS and GPUs. Without --manifest a stack that
// cannot be found is not an error:
// --image or the profile may name the image (Resolve says so when nothing does).
// `reason` is set when the stack was not named (printed when the stack's image is used).
std::optional<manifest::Stack> LoadStackFor(const launch::Target& t, Context& ctx, sys::Fs* probe_fs,
                                            std::string& reason) {
  if (!ctx.opts.manifest.empty()) {
    std::unique_ptr<sys::HttpClient> http;
    const manifest::ManifestSource from = manifest::ParseManifestSource(ctx.opts.manifest, ctx.local_fs);
    manifest::Stack s = manifest::LoadStack(from, ManifestLoadContext(ctx, from, http));
    CheckManifestSha256(ctx, ctx.opts.manifest, s);
    return s;
  }
  CheckManifestSha256(ctx, "", manifest::Stack{});        // the flag without --manifest: refused
  const manifest::LoadContext lc{ctx.local_fs, nullptr};  // embedded stacks only from here on
  if (probe_fs && !t.from_snapshot) {
    try {
      const auto hs = apply::ReadHostStack(*probe_fs);
      if (auto site = LoadSiteStack(*probe_fs, hs)) {
        reason = "the site file " + SitePath(*probe_fs);
        return site;
      }
      if (hs) {
        reason = std::string("this host's stack (") + apply::kStatusPath + ")";
        return LoadHostStack(ctx, *probe_fs, *hs);
      }
    } catch (const Error& e) {  // the host's own stack, not usable as it is: no other stack's image instead
      spdlog::warn("{}", e.what());
      return std::nullopt;
    }
  }
  try {
    const auto names = manifest::EmbeddedStackNames();
    if (!t.manifest.empty() && std::find(names.begin(), names.end(), t.manifest) != names.end()) {
      reason = "the stack doctor checked in " + t.snapshot_path;
      return manifest::LoadStack(t.manifest, lc);
    }
    auto choice = DefaultStackFor(t.host);
    reason = choice.reason;
    return manifest::LoadStack(choice.name, lc);
  } catch (const Error& e) {
    spdlog::debug("no default stack: {}", e.what());
    return std::nullopt;
  }
}

// A launch is printed to be copied and run as shown. A control character or a bidirectional control in it
// (from a profile, a stack or a flag) would make what the terminal shows differ from what runs, and escaping
// it would change the command: it is refused, naming the line (escaped).
void RefuseUnshowable(const std::string& text) {
  std::optional<size_t> at = ControlCharAt(text, /*allow_text=*/true);
  if (const std::optional<size_t> bidi = BidiControlAt(text); bidi && (!at || *bidi < *at)) at = bidi;
  if (!at) return;
  const size_t begin = text.rfind('\n', *at) == std::string::npos ? 0 : text.rfind('\n', *at) + 1;
  const std::string line = text.substr(begin, text.find('\n', *at) - begin);
  throw UsageError(
      "launch: a value holds a control or bidirectional character, which a terminal would not "
      "show as it runs: " +
      TerminalSafe(line.substr(0, 200)));
}

// This host's route toward MASTER_ADDR, read when this live host (not a --root tree) is one of the nodes of a
// launch for several nodes: the target itself, or a node whose snapshot has this host's machine-id.
launch::LocalNet LocalNetFor(const LaunchFlags& f, const launch::Target& t,
                             const std::vector<launch::Target>& nodes, const std::string& machine_id,
                             bool live) {
  if (!live || !f.Given("--nodes") || f.nodes < 2 || !f.Given("--master")) return {};
  const bool here = !t.from_snapshot || std::any_of(nodes.begin(), nodes.end(), [&machine_id](const auto& n) {
    return !machine_id.empty() && n.host.machine_id == machine_id;
  });
  if (!here) return {};
  return launch::ReadLocalNet(launch::ParseMaster(f.master).first);
}

// The flags as Resolve reads them: a flag not given is absent (the profile or the stack may set it).
launch::LaunchRequest RequestOf(const LaunchFlags& f, const Context& ctx) {
  launch::LaunchRequest req;
  auto opt = [&f](const char* name, const std::string& v) {
    return f.Given(name) ? std::optional<std::string>(v) : std::nullopt;
  };
  req.image = opt("--image", f.image);
  req.gpus = opt("--gpus", f.gpus);
  req.shm = opt("--shm", f.shm);
  req.ipc = opt("--ipc", f.ipc);
  req.workdir = opt("--workdir", f.workdir);
  req.name = opt("--name", f.name);
  req.master = opt("--master", f.master);
  req.rdma_resource = opt("--rdma-resource", f.rdma_resource);
  if (f.Given("--nodes")) req.nodes = f.nodes;
  if (f.Given("--node-rank")) req.node_rank = f.node_rank;
  req.volumes = f.volumes;
  req.envs = f.envs;
  req.interactive = f.interactive;
  req.format = f.Given("--format") || !ctx.opts.json ? f.format : "json";
  req.command = f.command;
  return req;
}

int RunLaunch(const LaunchFlags& f, Context& ctx) {
  const launch::LaunchRequest req = RequestOf(f, ctx);
  std::unique_ptr<sys::Fs> probe_fs;
  const std::vector<launch::Target> nodes = LoadSnapshots(f, ctx);
  size_t target_index = 0;
  launch::Target target = LoadTarget(f, nodes, ctx, probe_fs, target_index);
  std::optional<launch::Profile> profile;
  if (f.Given("--profile")) {
    const bool is_path = f.profile.find('/') != std::string::npos || EndsWith(f.profile, ".yaml") ||
                         EndsWith(f.profile, ".yml");
    profile = launch::LoadProfile(is_path ? sys::AbsoluteFromCwd(f.profile) : f.profile, *ctx.local_fs);
  }
  std::string stack_reason;
  const std::optional<manifest::Stack> stack = LoadStackFor(target, ctx, probe_fs.get(), stack_reason);

  // The image's own CUDA: from the local engine, else (--registry) from its registry. The image as
  // Resolve picks it: the flag, the profile's, the stack's.
  const std::string image = req.image                            ? *req.image
                            : profile && !profile->image.empty() ? profile->image
                            : stack                              ? launch::StackImageRef(*stack)
                                                                 : "";
  // Nothing is asked about a reference that is not one: Resolve reports it as the flag's one error line.
  const bool lookable = !image.empty() && image != "none" && docker::ParseImageRef(image).has_value();
  if (!target.from_snapshot && ctx.unix_http && lookable) {
    probe::ProbeEnv penv;
    penv.docker = ctx.unix_http;
    probe::ProbeImage(penv, image, target.host);
  }
  if (f.registry && lookable) {
    ReadImageFromRegistry(ctx, image, target.host);
    const probe::ImageInfo& read = target.host.docker.image;
    if (!read.registry_error.empty())
      spdlog::warn("could not read {} from its registry ({}); its CUDA comes from the stack's tables",
                   TerminalSafe(image), TerminalSafe(read.registry_error));
  }
  launch::ResolveInputs in;
  in.target = &target;
  in.stack = stack ? &*stack : nullptr;
  in.compat = &manifest::EmbeddedCompat();
  in.profile = profile ? &*profile : nullptr;
  in.live_fs = target.from_snapshot ? nullptr : probe_fs.get();
  in.machine_id = LiveMachineId(ctx);
  // Several snapshots: the target (with what was read of its image) is one of them.
  std::vector<launch::Target> all = nodes;
  if (all.size() > 1) {
    all[target_index] = target;
    in.nodes = &all;
    in.target = &all[target_index];
  }
  const launch::LocalNet local_net = LocalNetFor(f, target, nodes, in.machine_id, ctx.opts.root.empty());
  if (local_net.measured) in.local_net = &local_net;
  const launch::RunConfig config = launch::Resolve(req, in);
  const std::string text = launch::Render(config, req.format);
  RefuseUnshowable(text);
  if (!stack_reason.empty() && config.origins.at("image") == launch::Origin::kStack)
    spdlog::info("image from stack {}: {}", stack->name, stack_reason);
  for (const std::string& w : config.warnings) spdlog::warn("{}", w);
  *ctx.out << text;
  return kExitOk;
}

}  // namespace

void RegisterLaunch(CLI::App* sub, Context& ctx, int& exit_code) {
  auto f = std::make_shared<LaunchFlags>();
  auto add = [&](const char* name, std::string& v, const char* help) {
    f->opts[name] = sub->add_option(name, v, help);
  };
  f->opts["--host"] =
      sub->add_option("--host", f->hosts,
                      "Host snapshot: the JSON `gpuprep doctor --json` printed there (default: probe this "
                      "host); with --nodes N, repeat it once per node, in rank order")
          ->allow_extra_args(false);
  add("--profile", f->profile, "Team profile: embedded NAME or a YAML PATH");
  add("--image", f->image, "Container image (default: the profile's, else the stack's; none: bare torchrun)");
  add("--gpus", f->gpus, "all | none | N (a count) | i,j,... | device=i[,j...] (indices)");
  add("--shm", f->shm, "/dev/shm size for --ipc private: SIZE (16g) or auto (default)");
  add("--ipc", f->ipc, "host (default, NVIDIA's recommendation) | private");
  f->opts["-v"] = sub->add_option("-v,--volume", f->volumes, "SRC:DST[:ro] bind mount (repeatable)")
                      ->allow_extra_args(false);
  f->opts["-e"] = sub->add_option("-e,--env", f->envs, "NAME=VALUE (repeatable)")->allow_extra_args(false);
  add("--workdir", f->workdir, "Working directory in the container");
  add("--name", f->name, "Container / job name");
  f->opts["--interactive"] = sub->add_flag("--interactive", f->interactive, "Add -it (a terminal)");
  f->opts["--nodes"] = sub->add_option("--nodes", f->nodes, "Number of nodes (multi-node training)");
  f->opts["--node-rank"] = sub->add_option("--node-rank", f->node_rank, "This node's rank, 0..nodes-1");
  add("--master", f->master, "ADDR:PORT of the rank-0 node");
  add("--rdma-resource", f->rdma_resource,
      "k8s, several nodes: the extended resource for the RDMA devices (default from the host: "
      "rdma/rdma_shared_device_a, vpc.amazonaws.com/efa; none: no resource)");
  f->opts["--registry"] = sub->add_flag(
      "--registry", f->registry,
      "Read the image's CUDA from its registry when the local engine does not have it (network)");
  add("--format", f->format, "docker (default) | json | compose | torchrun | slurm | k8s");
  sub->add_option("command", f->command, "The container command, after --");
  sub->callback([f, &ctx, &exit_code] { exit_code = RunLaunch(*f, ctx); });
}

}  // namespace gp::cli
