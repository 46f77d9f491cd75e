// `gpuprep manifest list | show NAME|PATH | validate PATH|URL` (docs/cli.md): the embedded stacks, one stack
// resolved through `extends:` with the origin of every value, or a user file checked with line-precise
// errors.
#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "apply/status.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/target.h"
#include "cli/task_doc.h"
#include "launch/profile.h"
#include "layers/task.h"
#include "manifest/digest.h"
#include "manifest/loader.h"
#include "manifest/tree.h"
#include "sys/fs.h"
#include "sys/fs_errors.h"
#include "sys/host_info.h"
#include "sys/http.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::cli {
namespace {

using manifest::Stack;
using nlohmann::json;

std::string OsList(const Stack& s) {
  std::vector<std::string> parts;
  for (const auto& o : s.os) parts.push_back(o.id + " " + o.version_id);
  return Join(parts, ", ");
}

std::string PinText(const manifest::Pinned& p) {
  if (p.unknown) return "unknown (" + p.reason + ")";
  return p.version ? p.version->str() : "-";
}

json PinJson(const manifest::Pinned& p) {
  json j = {{"version", p.known() ? json(p.version->str()) : json(nullptr)}};
  if (p.unknown) j["unknown_reason"] = p.reason;
  return j;
}

json PackagesJson(const std::vector<manifest::AptPackage>& pkgs) {
  json out = json::array();
  for (const auto& p : pkgs) {
    json j = {{"name", p.name}, {"version", p.version}};
    if (!p.upstream.empty()) j["upstream"] = p.upstream;
    out.push_back(j);
  }
  return out;
}

json ComponentJson(const manifest::ComponentSpec& c) {
  json j = PinJson(c.version);
  j["enabled"] = c.enabled;
  j["optional"] = c.optional;
  if (c.cuda_major) j["cuda_major"] = *c.cuda_major;
  j["packages"] = PackagesJson(c.packages);
  return j;
}

json StackJson(const Stack& s) {
  json os = json::array();
  for (const auto& o : s.os) os.push_back({{"id", o.id}, {"version_id", o.version_id}});
  json repos = json::array();
  for (size_t i = 0; i < s.repositories.size(); ++i) {
    const auto& r = s.repositories[i];
    json jr = {{"name", r.name},
               {"url", r.url},
               {"suite", r.suite},
               {"components", r.components},
               {"keyring_url", r.keyring_url},
               {"keyring_path", r.keyring_path},
               {"key_fingerprint", r.key_fingerprint},
               {"keyring_sha256", r.keyring_sha256},
               {"list_path", r.list_path}};
    if (!r.os.id.empty()) jr["os"] = {{"id", r.os.id}, {"version_id", r.os.version_id}};
    repos.push_back(jr);
  }
  json driver = PinJson(s.driver.version);
  driver["branch"] = s.driver.branch;
  driver["flavour"] = s.driver.flavour;
  driver["signed_modules"] = s.driver.signed_modules;
  driver["packages"] = PackagesJson(s.driver.packages);
  driver["fabricmanager_packages"] = PackagesJson(s.driver.fabricmanager_packages);
  json image = {{"ref", s.image.ref}, {"cuda", PinJson(s.image.cuda)}, {"digest", s.image.digest}};
  image["driver_min_branch"] = s.image.driver_min_branch ? json(*s.image.driver_min_branch) : json(nullptr);
  json fc = json::array();
  for (const auto& v : s.image.forward_compat) fc.push_back(v.str());
  image["forward_compat"] = fc;
  json docker = nullptr;  // no docker: section: apply does not set Docker up
  if (s.docker.present)
    docker = {{"engine", s.docker.engine},
              {"packages", PackagesJson(s.docker.packages)},
              {"gpu_access", s.docker.gpu_access},
              {"default_runtime", s.docker.default_runtime},
              {"toolkit_mode", s.docker.toolkit_mode.empty() ? json(nullptr) : json(s.docker.toolkit_mode)}};
  return {{"name", s.name},
          {"description", s.description},
          {"source", s.source},
          {"extends", s.extends_chain},
          {"os", os},
          {"architectures", s.architectures},
          {"repositories", repos},
          {"driver", driver},
          {"cuda", ComponentJson(s.cuda)},
          {"cudnn", ComponentJson(s.cudnn)},
          {"nccl", ComponentJson(s.nccl)},
          {"container_toolkit", ComponentJson(s.container_toolkit)},
          {"image", image},
          {"docker", docker},
          {"workload",
           {{"profile", s.workload.profile},
            {"min_cpus_per_gpu", s.workload.min_cpus_per_gpu},
            {"min_ram_per_gpu", s.workload.min_ram_per_gpu},
            {"min_shm_per_gpu", s.workload.min_shm_per_gpu},
            {"task", s.workload.task ? json(s.workload.task->path) : json(nullptr)},
            {"nodes", s.workload.nodes}}},
          {"notes", s.notes},
          {"origins", s.origins}};
}

// What `manifest list` says about the host it runs on (or the --root tree): the stack apply recorded there
// and the default a host never applied would get, with why. Probed from files only (no library is loaded).
struct HostView {
  std::optional<apply::HostStack> host_stack;
  std::string host_stack_error;  // status.json cannot be read ("" = fine)
  std::string site_stack;        // the name in the host's site file (kSiteFile), "" without one
  std::string site_error;        // the site file cannot be used ("" = fine)
  std::optional<manifest::DefaultChoice> choice;
  std::string choice_error;  // no embedded stack supports the host
};

HostView ViewHost(Context& ctx) {
  HostView v;
  ProbedHost p = ProbeFiles(ctx);
  try {
    v.host_stack = apply::ReadHostStack(*p.fs);
  } catch (const Error& e) {
    v.host_stack_error = e.what();
  }
  try {
    if (auto site = LoadSiteStack(*p.fs, v.host_stack)) v.site_stack = site->name;
  } catch (const Error& e) {
    v.site_error = e.what();
  }
  try {
    v.choice = DefaultStackFor(p.facts);
  } catch (const Error& e) {
    v.choice_error = e.what();
  }
  return v;
}

std::string DriverText(const Stack& s) {
  return "R" + std::to_string(s.driver.branch) +
         (manifest::EmbeddedCompat().IsLongTermSupport(s.driver.branch) ? " LTS" : "");
}

// `manifest list --json`: every embedded stack, the host's default, recorded and site stacks.
void ListJson(Context& ctx, const std::vector<Stack>& stacks, const HostView& host) {
  json out = json::array();
  for (const auto& s : stacks) {
    json os = json::array();
    for (const auto& o : s.os) os.push_back({{"id", o.id}, {"version_id", o.version_id}});
    const manifest::DriverBranchInfo* b = manifest::EmbeddedCompat().BranchInfo(s.driver.branch);
    out.push_back(
        {{"name", s.name},
         {"os", os},
         {"architectures", s.architectures},
         {"driver_branch", s.driver.branch},
         {"driver_designation", b ? json(b->designation) : json(nullptr)},
         {"driver", s.driver.version.known() ? json(s.driver.version.version->str()) : json(nullptr)},
         {"cuda", s.cuda.version.known() ? json(s.cuda.version.version->str()) : json(nullptr)},
         {"image", s.image.ref},
         {"legacy", s.legacy},
         {"driver_end_of_life", s.driver.end_of_life.empty() ? json(nullptr) : json(s.driver.end_of_life)},
         {"content_hash", manifest::ContentHash(s)}});
  }
  json d = host.choice ? json{{"name", host.choice->name}, {"reason", host.choice->reason}} : json(nullptr);
  json hs = nullptr;
  if (host.host_stack)
    hs = {{"stack", host.host_stack->record.stack},
          {"manifest", host.host_stack->record.manifest},
          {"content_hash", host.host_stack->record.content_hash},
          {"converged", host.host_stack->converged}};
  json doc = {{"stacks", out}, {"default", d}, {"host_stack", hs}};
  if (!host.choice_error.empty()) doc["default_error"] = host.choice_error;
  if (!host.host_stack_error.empty()) doc["host_stack_error"] = host.host_stack_error;
  doc["site_file"] =
      host.site_stack.empty() ? json(nullptr) : json{{"path", kSiteFile}, {"stack", host.site_stack}};
  if (!host.site_error.empty()) doc["site_file_error"] = host.site_error;
  PrintJson(ctx, doc);
}

// `manifest list`: a row per stack, marked default / this host's, then the host's stacks in words.
void ListText(Context& ctx, const std::vector<Stack>& stacks, const HostView& host) {
  const std::string def = host.choice ? host.choice->name : "";
  const std::string mine = host.host_stack ? host.host_stack->record.stack : "";
  size_t wn = 4, wo = 2;
  for (const auto& s : stacks) wn = std::max(wn, s.name.size()), wo = std::max(wo, OsList(s).size());
  auto row = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d,
                 const std::string& e) {
    *ctx.out << std::left << std::setw(static_cast<int>(wn)) << TerminalSafe(a) << "  "
             << std::setw(static_cast<int>(wo)) << TerminalSafe(b) << "  " << std::setw(8) << TerminalSafe(c)
             << "  " << std::setw(7) << TerminalSafe(d) << "  " << TerminalSafe(e) << "\n";
  };
  row("NAME", "OS", "DRIVER", "CUDA", "IMAGE");
  // A legacy stack is kept for hosts already on it and never picked without --manifest: say so on its row.
  for (const auto& s : stacks) {
    std::string image = s.image.ref;
    if (s.legacy)
      image += s.driver.end_of_life.empty() ? "  (legacy: only with --manifest)"
                                            : "  (legacy: only with --manifest; driver branch end of life " +
                                                  s.driver.end_of_life + ")";
    if (s.name == def) image += "  (default for a new host like this one)";
    if (s.name == mine) image += "  (this host's stack)";
    row(s.name, OsList(s), DriverText(s), PinText(s.cuda.version), image);
  }
  if (host.choice)
    *ctx.out << "\ndefault for a new host like this one: " << TerminalSafe(host.choice->name) << ", "
             << TerminalSafe(host.choice->reason) << "\n";
  else
    *ctx.out << "\nno default for this host: " << TerminalSafe(host.choice_error) << "\n";
  if (!host.site_stack.empty())
    *ctx.out << "this host's site file: " << kSiteFile << " (stack " << TerminalSafe(host.site_stack)
             << "); doctor, plan and apply use it before the stack apply recorded\n";
  else if (!host.site_error.empty())
    *ctx.out << "this host's site file: not usable (" << TerminalSafe(host.site_error) << ")\n";
  if (host.host_stack)
    *ctx.out << "this host's stack: " << TerminalSafe(host.host_stack->record.stack) << " ("
             << (host.host_stack->converged ? "converged" : "the last apply, not finished") << ", "
             << apply::kStatusPath << "); doctor, plan and apply keep it until --manifest names another\n";
  else if (!host.host_stack_error.empty())
    *ctx.out << "this host's stack: unknown (" << TerminalSafe(host.host_stack_error) << ")\n";
}

void List(Context& ctx) {
  std::vector<Stack> stacks;
  manifest::LoadContext lc{ctx.local_fs, nullptr};
  for (const auto& name : manifest::EmbeddedStackNames()) stacks.push_back(manifest::LoadStack(name, lc));
  const HostView host = ViewHost(ctx);
  if (ctx.opts.json)
    ListJson(ctx, stacks, host);
  else
    ListText(ctx, stacks, host);
}

using ShowRows = std::vector<std::array<std::string, 3>>;  // field, value, origin

// "name=version name ...", or "-" for none.
std::string PackagesText(const std::vector<manifest::AptPackage>& ps) {
  std::vector<std::string> parts;
  parts.reserve(ps.size());
  for (const auto& p : ps) parts.push_back(p.version.empty() ? p.name : p.name + "=" + p.version);
  return parts.empty() ? std::string("-") : Join(parts, " ");
}

// The stack's heading, then the rows with their fields aligned; values and origins (paths) escaped.
void PrintShowRows(const Stack& s, const ShowRows& rows, std::ostream& out) {
  out << "stack " << TerminalSafe(s.name) << " (" << TerminalSafe(s.source) << ")\n";
  if (!s.extends_chain.empty()) out << "extends " << TerminalSafe(Join(s.extends_chain, " -> ")) << "\n";
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r[0].size());
  for (const auto& r : rows)
    out << "  " << std::left << std::setw(static_cast<int>(w)) << r[0] << "  " << TerminalSafe(r[1]) << "  # "
        << TerminalSafe(r[2]) << "\n";
}

// One "field  value  origin" line per value, in manifest order.
void ShowText(const Stack& s, std::ostream& out) {
  ShowRows rows;
  auto origin = [&](const std::string& key) {
    auto it = s.origins.find(key);
    return it == s.origins.end() ? std::string("default") : it->second;
  };
  auto add = [&](const std::string& key, const std::string& value) {
    rows.push_back({key, value, origin(key)});
  };
  auto pkgs = PackagesText;
  add("metadata.name", s.name);
  add("metadata.description", s.description);
  add("os", OsList(s));
  add("architectures", Join(s.architectures, ", "));
  for (size_t i = 0; i < s.repositories.size(); ++i) {
    const auto& r = s.repositories[i];
    std::string os = r.os.id.empty() ? "" : " [" + r.os.id + " " + r.os.version_id + "]";
    std::string key = r.key_fingerprint.empty()
                          ? (r.keyring_sha256.empty() ? "no key pin" : "sha256 " + r.keyring_sha256)
                          : "key " + r.key_fingerprint;
    rows.push_back({"repositories." + r.name, r.url + os + " (" + key + ")",
                    origin("repositories." + std::to_string(i))});
  }
  add("driver.branch", std::to_string(s.driver.branch));
  add("driver.version", PinText(s.driver.version));
  add("driver.flavour", s.driver.flavour);
  add("driver.packages", pkgs(s.driver.packages));
  add("driver.fabricmanager_packages", pkgs(s.driver.fabricmanager_packages));
  for (auto [name, c] : {std::pair<const char*, const manifest::ComponentSpec*>{"cuda", &s.cuda},
                         {"cudnn", &s.cudnn},
                         {"nccl", &s.nccl},
                         {"container_toolkit", &s.container_toolkit}}) {
    std::string n = name;
    if (!c->enabled) {
      add(n + ".enabled", "false");
      continue;
    }
    add(n + ".version", PinText(c->version));
    if (c->cuda_major) add(n + ".cuda_major", std::to_string(*c->cuda_major));
    add(n + ".packages", pkgs(c->packages));
  }
  add("image.ref", s.image.ref);
  add("image.cuda", PinText(s.image.cuda));
  if (s.docker.present) {
    add("docker.engine", s.docker.engine);
    add("docker.packages", pkgs(s.docker.packages));
    add("docker.gpu_access", s.docker.gpu_access);
    add("docker.default_runtime", s.docker.default_runtime ? "true" : "false");
    if (!s.docker.toolkit_mode.empty()) add("docker.toolkit_mode", s.docker.toolkit_mode);
  }
  add("workload.profile", s.workload.profile);
  add("workload.min_cpus_per_gpu", std::to_string(s.workload.min_cpus_per_gpu));
  add("workload.min_ram_per_gpu", HumanBytes(s.workload.min_ram_per_gpu));
  add("workload.min_shm_per_gpu", HumanBytes(s.workload.min_shm_per_gpu));
  if (s.workload.nodes > 1) add("workload.nodes", std::to_string(s.workload.nodes));
  if (s.workload.task) add("workload.task", s.workload.task->path);
  PrintShowRows(s, rows, out);
}

void Show(const std::string& spec, Context& ctx) {
  std::unique_ptr<sys::HttpClient> http;
  const manifest::ManifestSource from = manifest::ParseManifestSource(spec, ctx.local_fs);
  Stack s = manifest::LoadStack(from, ManifestLoadContext(ctx, from, http));
  // `manifest show SPEC --manifest-sha256 HEX`: the stack shown is that one.
  CheckManifestSha256(ctx, spec, s);
  if (ctx.opts.json)
    PrintJson(ctx, StackJson(s));
  else
    ShowText(s, *ctx.out);
}

// Reads what `manifest validate` was given: a file, or an https URL (plain http only to loopback).
std::string ReadForValidate(const std::string& path, Context& ctx) {
  if (manifest::ShapeOf(path) == manifest::SourceShape::kUrl) {
    if (std::string why = CheckUrl(path, UrlRule::kFetch); !why.empty()) throw UsageError(path + ": " + why);
    std::unique_ptr<sys::HttpClient> http = ctx.make_http ? ctx.make_http() : nullptr;
    if (!http) throw UsageError(path + ": cannot fetch: no HTTP client here");
    sys::HttpRequest req;
    req.url = path;
    req.timeout = std::chrono::seconds(30);
    req.max_body = manifest::kMaxManifestBytes;  // capped while it downloads
    auto resp = http->Send(req);
    if (!resp.ok())
      throw UsageError("cannot fetch " + path + ": " +
                       (resp.error.empty() ? "HTTP status " + std::to_string(resp.status) : resp.error));
    return std::move(resp.body);
  }
  const std::string abs = sys::AbsoluteFromCwd(path);
  if (!ctx.local_fs) throw UsageError("cannot read " + path + ": no filesystem here");
  std::string why;
  auto text = sys::ReadWithin(*ctx.local_fs, abs, path, manifest::kMaxManifestBytes, why);
  if (!text) throw UsageError(why);
  return std::move(*text);
}

void Validate(const std::string& path, Context& ctx) {
  auto text = std::optional<std::string>(ReadForValidate(path, ctx));
  manifest::LoadContext lc{ctx.local_fs, nullptr};
  std::string kind = manifest::ValidateDocument(*text, path, lc);
  if (kind == "Profile") launch::ParseProfile(*text, path);
  std::vector<std::string> warnings;  // stack.library-unsupported-board: warnings, the exit code stays 0
  if (kind == "Stack") {
    const manifest::Stack s = manifest::ParseStack(*text, path, lc);
    (void)layers::StackTask(s);
    warnings = manifest::LibraryWarnings(s);
  }
  if (kind == "Task") ValidateTaskDocument(*text, path, ctx);
  if (kind == "Prices") ValidatePricesDocument(*text, path);
  if (kind == "Offer") ValidateOfferDocument(*text, path);
  const char* code = "stack.library-unsupported-board";
  for (const std::string& w : warnings)
    *ctx.err << "gpuprep: warning: " << path << ": " << code << ": " << w << "\n";
  json doc{{"path", path}, {"ok", true}, {"kind", kind}};
  if (!warnings.empty()) {
    doc["warnings"] = json::array();
    for (const std::string& w : warnings) doc["warnings"].push_back(json{{"code", code}, {"message", w}});
  }
  if (ctx.opts.json)
    PrintJson(ctx, doc, -1);
  else
    *ctx.out << TerminalSafe(path) << ": ok (kind " << TerminalSafe(kind) << ")\n";
}

}  // namespace

void RegisterManifest(CLI::App* sub, Context& ctx, int& exit_code) {
  sub->require_subcommand(1);
  sub->add_subcommand(
         "list",
         "The embedded stacks (name, OS, driver branch, CUDA, image), this host's stack and its default")
      ->callback([&ctx, &exit_code] {
        List(ctx);
        exit_code = kExitOk;
      });
  auto show_spec = std::make_shared<std::string>(), validate_path = std::make_shared<std::string>();
  CLI::App* show =
      sub->add_subcommand("show", "One stack resolved through extends:, each value with its origin");
  show->add_option("stack", *show_spec,
                   "Embedded NAME, a YAML PATH or an https URL (default: --manifest, else the site file)");
  show->callback([&ctx, &exit_code, show_spec] {
    std::string spec = show_spec->empty() ? ctx.opts.manifest : *show_spec;
    if (spec.empty() && ctx.local_fs && ctx.local_fs->Exists(kSiteFile)) spec = kSiteFile;
    if (spec.empty())
      throw UsageError(std::string("manifest show: name a stack (no --manifest and no ") + kSiteFile + ")");
    Show(spec, ctx);
    exit_code = kExitOk;
  });
  CLI::App* validate =
      sub->add_subcommand("validate", "Check a manifest file; one precise error line, exit 2");
  validate
      ->add_option("path", *validate_path,
                   "A Stack, Compat, Profile, Task, Prices or Offer YAML file, or an https URL")
      ->required();
  validate->callback([&ctx, &exit_code, validate_path] {
    Validate(*validate_path, ctx);
    exit_code = kExitOk;
  });
}

}  // namespace gp::cli
