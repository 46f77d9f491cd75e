#include "plan/render.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::plan {
namespace {

std::string Octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

bool EnvName(const std::string& k) {
  if (k.empty() || (k[0] >= '0' && k[0] <= '9')) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

std::string DescribeRedist(const redist::Request& r) {
  std::string what = Join(r.components, ", ") + " " + r.version + " (" + r.platform +
                     (r.cuda_major ? ", cuda" + std::to_string(*r.cuda_major) : "") + ")";
  return "install NVIDIA redistributable " + what + " listed in " + r.json_url +
         (r.json_sha256.empty() ? "" : " (sha256 " + r.json_sha256 + ")") + " into " + r.prefix +
         ", checking each archive's sha256, then point " + r.current_link + " at it and write " +
         r.ldconf_path;
}

// NAME=VALUE words before the command; a name the shell would not read as an assignment goes through
// env(1) instead, so it can never become the command word.
std::string EnvPrefix(const Action& a) {
  std::string out, odd;
  for (const auto& [k, v] : a.env) {
    if (EnvName(k))
      out += k + "=" + sys::ShellQuote(v) + " ";
    else
      odd += sys::ShellQuote(k + "=" + v) + " ";
  }
  return odd.empty() ? out : out + "env " + odd;
}

// Text inside a `#` comment: one line, with control characters shown escaped.
std::string Comment(const std::string& s) { return TerminalSafe(s); }

// The text form of one action (also the body of the sh form for kRun).
std::string Describe(const Action& a) {
  switch (a.kind) {
    case Action::Kind::kRun:
      return EnvPrefix(a) + sys::ShellJoin(a.argv);
    case Action::Kind::kWrite:
      return "write " + a.path + (a.link.empty() ? "" : " (through the link " + a.link + ")") + " (mode " +
             Octal(a.mode) + ")";
    case Action::Kind::kMove:
      return "move " + a.path + " to " + a.to;
    case Action::Kind::kFetch:
      return "fetch " + a.url + " -> " + a.path + " (" +
             (a.sha256.empty() ? "fingerprint " + a.fingerprint : "sha256 " + a.sha256) + ")";
    case Action::Kind::kVerify:
      return "verify " + a.layer;
    case Action::Kind::kRebootCheck:
      return "check whether a reboot is required";
    case Action::Kind::kRedist:
      return DescribeRedist(a.redist);
    case Action::Kind::kPull:
      return "pull " + a.image + " (Docker Engine API" +
             (a.digest.empty() ? ", digest recorded)" : ", digest must be " + a.digest + ")");
  }
  return "";
}

// `contents` ends with a newline (the caller checks); the marker appears nowhere in it.
std::string Heredoc(const std::string& contents) {
  std::string marker = "GPUPREP_EOF";
  while (contents.find(marker) != std::string::npos) marker += "_";
  return "<<'" + marker + "'\n" + contents + marker + "\n";
}

}  // namespace

std::string RenderText(const Plan& plan) {
  std::ostringstream out;
  out << "stack " << plan.stack << "\n";
  if (!plan.move_from.empty()) {
    out << "moving this host from stack " << plan.move_from << " (the stack it runs) to " << plan.stack
        << ":\n";
    for (const auto& c : plan.move_changes)
      out << "  " << c.field << ": " << (c.from.empty() ? "-" : c.from) << " -> "
          << (c.to.empty() ? "-" : c.to) << "\n";
    if (plan.move_changes.empty()) out << "  no pinned value changes\n";
  }
  for (const auto& l : plan.layers) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-14s %-8s ", l.name.c_str(), DecisionName(l.kind));
    out << line;
    if (!l.wanted.empty()) out << l.wanted << " (found: " << (l.found.empty() ? "none" : l.found) << ") ";
    out << l.detail << "\n";
  }
  if (!plan.left_alone.empty()) out << "left alone (not selected): " << Join(plan.left_alone, ", ") << "\n";
  for (const auto& b : plan.blockers) out << "blocked: " << b << "\n";
  if (plan.reboot)
    out << "reboot: the new driver loads only after a reboot (apply exits 3; with --reboot it reboots, and "
           "resumes after the boot)\n";
  if (plan.steps.empty()) {
    out << "nothing to do\n";
    return out.str();
  }
  int n = 0;
  for (const auto& s : plan.steps) {
    out << ++n << ". " << s.title << " [" << s.id << "]\n";
    for (const auto& a : s.actions) {
      out << "     " << Describe(a) << "\n";
      for (const auto& line : Split(a.diff, '\n'))
        if (!line.empty()) out << "       " << line << "\n";
    }
  }
  return out.str();
}

std::vector<std::string> GpuprepArgv(const ShOptions& o, const std::string& verb) {
  std::vector<std::string> argv = {o.gpuprep};
  if (!o.root.empty()) argv.insert(argv.end(), {"--root", o.root});
  if (!o.manifest.empty()) argv.insert(argv.end(), {"--manifest", o.manifest});
  if (!o.manifest_sha256.empty()) argv.insert(argv.end(), {"--manifest-sha256", o.manifest_sha256});
  argv.push_back(verb);
  return argv;
}

std::string RenderSh(const Plan& plan, const std::string& gpuprep) {
  ShOptions o;
  o.gpuprep = gpuprep;
  o.manifest = plan.manifest;
  return RenderSh(plan, o);
}

std::string RenderSh(const Plan& plan, const ShOptions& o) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# gpuprep plan for stack " << Comment(plan.stack)
      << ": the commands `gpuprep apply` runs, in order.\n"
      << "# Review, then run as root. Each command is exactly one argv; nothing relies on word splitting.\n"
      << "set -euo pipefail\n";
  if (!plan.move_from.empty()) {
    out << "# moving this host from stack " << Comment(plan.move_from) << ":\n";
    for (const auto& c : plan.move_changes)
      out << "#   " << Comment(c.field) << ": " << Comment(c.from.empty() ? "-" : c.from) << " -> "
          << Comment(c.to.empty() ? "-" : c.to) << "\n";
  }
  if (plan.reboot) out << "# the new driver loads only after a reboot\n";
  for (const auto& l : plan.layers)
    out << "# layer " << Comment(l.name) << ": " << DecisionName(l.kind)
        << (l.detail.empty() ? "" : " - " + Comment(l.detail)) << "\n";
  for (const auto& b : plan.blockers) out << "echo " << sys::ShellQuote("blocked: " + b) << " >&2; exit 1\n";
  if (plan.steps.empty()) out << "# nothing to do\n";
  bool fetches = false;
  for (const auto& s : plan.steps)
    for (const auto& a : s.actions) fetches = fetches || a.kind == Action::Kind::kFetch;
  if (fetches) out << "tmp=\"$(mktemp -d)\"\ntrap 'rm -rf -- \"$tmp\"' EXIT\n";
  bool backups = false;
  for (const auto& s : plan.steps)
    for (const auto& a : s.actions) backups = backups || (a.kind == Action::Kind::kWrite && a.keep_backup);
  // The backup rule apply follows (sys/fs.h WriteAtomic): the next free FILE.gpuprep-bak[.N], never over an
  // earlier one, and none when one already holds the same bytes.
  if (backups)
    out << "gpuprep_backup() {\n"
        << "  [ -e \"$1\" ] || return 0\n"
        << "  local b=\"$1.gpuprep-bak\" i=0\n"
        << "  while [ -e \"$b\" ] || [ -L \"$b\" ]; do\n"
        << "    if cmp -s -- \"$1\" \"$b\"; then return 0; fi\n"
        << "    i=$((i + 1))\n"
        << "    b=\"$1.gpuprep-bak.$i\"\n"
        << "  done\n"
        << "  cp -p -- \"$1\" \"$b\"\n"
        << "}\n";
  std::vector<std::string> verify = GpuprepArgv(o, "verify");
  verify.push_back("--only");
  int n = 0;
  for (const auto& s : plan.steps) {
    out << "\n# " << ++n << ". " << Comment(s.title) << " [" << Comment(s.id) << "]\n";
    for (const auto& a : s.actions) {
      switch (a.kind) {
        case Action::Kind::kRun:
          out << EnvPrefix(a) << sys::ShellJoin(a.argv) << "\n";
          break;
        case Action::Kind::kWrite: {
          const std::string p = sys::ShellQuote(a.path);
          if (!a.link.empty())
            out << "# " << Comment(a.link) << " is a link to this file: written through it\n";
          out << "mkdir -p -- \"$(dirname -- " << p << ")\"\n";
          // A here-document for text that ends with a newline (readable); other contents byte for byte
          // through printf, so the file is exactly what apply writes.
          if (a.contents.empty() || a.contents.back() != '\n')
            out << "printf '%s' " << sys::ShellQuote(a.contents) << " > " << p << ".gpuprep-new\n";
          else
            out << "cat > " << p << ".gpuprep-new " << Heredoc(a.contents);
          out << "chmod " << Octal(a.mode) << " " << p << ".gpuprep-new\n";
          if (a.keep_backup) out << "gpuprep_backup " << p << "\n";
          out << "mv -f -- " << p << ".gpuprep-new " << p << "\n";
          break;
        }
        case Action::Kind::kMove:
          out << "mv -- " << sys::ShellQuote(a.path) << " " << sys::ShellQuote(a.to) << "\n";
          break;
        case Action::Kind::kFetch: {
          const std::string tmp = "\"$tmp/key" + std::to_string(n) + "\"";
          const std::string dst = sys::ShellQuote(a.path);
          // Like apply: TLS verified by curl, and a redirect never leaves https.
          out << "curl --fail --silent --show-error --location "
              << (StartsWith(a.url, "https://") ? "--proto-redir =https " : "") << "--output " << tmp << " "
              << sys::ShellQuote(a.url) << "\n";
          // The same checks as apply: the sha256 when pinned, and the fingerprint when pinned, matched
          // against primary keys only (the first fpr record after each pub record), never a subkey.
          if (!a.sha256.empty())
            out << "echo " << sys::ShellQuote(a.sha256) << "\"  $tmp/key" << n
                << "\" | sha256sum --check --quiet\n";
          if (!a.fingerprint.empty())
            out << "gpg --batch --show-keys --with-colons " << tmp
                << " | awk -F: '$1 == \"pub\" { p = 1; next } $1 == \"fpr\" && p { print $10; p = 0 }' | "
                   "grep -qx "
                << sys::ShellQuote(a.fingerprint) << "\n";
          out << "if grep -q 'BEGIN PGP PUBLIC KEY BLOCK' " << tmp
              << "; then gpg --batch --yes --dearmor --output " << dst << " " << tmp << "; else install -m "
              << Octal(a.mode) << " " << tmp << " " << dst << "; fi\n";
          break;
        }
        case Action::Kind::kVerify:
          verify.push_back(a.layer);
          out << sys::ShellJoin(verify) << "\n";
          verify.pop_back();
          break;
        case Action::Kind::kPull:
          out << "docker pull " << sys::ShellQuote(a.image) << "\n";
          if (!a.digest.empty())
            out << "docker image inspect --format '{{join .RepoDigests \"\\n\"}}' "
                << sys::ShellQuote(a.image) << " | grep -qF " << sys::ShellQuote("@" + a.digest) << "\n";
          break;
        case Action::Kind::kRebootCheck:
          out << "if [ -e /var/run/reboot-required ] || ! grep -qs "
              << sys::ShellQuote(" " + a.contents + " ") << " /proc/driver/nvidia/version; then\n"
              << "  echo 'gpuprep: a reboot is required; reboot, then run the rest of this script' >&2\n"
              << "  exit 3\n"
              << "fi\n";
          break;
        case Action::Kind::kRedist: {
          // The one-pass verified install has no shell equivalent that keeps its guarantees; the script
          // hands this step to gpuprep itself.
          std::vector<std::string> argv = GpuprepArgv(o, "apply");
          argv.insert(argv.end(), {"--yes", "--only", a.redist.layer});
          out << "# " << DescribeRedist(a.redist) << "\n" << sys::ShellJoin(argv) << "\n";
          break;
        }
      }
    }
    if (plan.needs_index && s.id == "apt.update") {
      // The exact versions, and the packages apt installs with them, come from the repositories' index,
      // which is on this host only now: the rest of the plan is gpuprep's own, made from it (the same rule
      // and closure apply uses), with every flag of this plan and the stack pinned by its sha256.
      std::vector<std::string> replan = GpuprepArgv(o, "plan");
      replan.insert(replan.end(), {"--format", "sh"});
      if (o.one_shot) replan.push_back("--one-shot");
      if (!o.only.empty()) replan.insert(replan.end(), {"--only", Join(o.only, ",")});
      if (!o.skip.empty()) replan.insert(replan.end(), {"--skip", Join(o.skip, ",")});
      if (o.restart_docker) replan.push_back("--restart-docker");
      if (o.one_shot) {
        out << "\n# " << ++n
            << ". the rest of the plan, with the exact versions resolved from the index just fetched\n"
            << "if [ -n \"${GPUPREP_REPLANNED:-}\" ]; then\n"
            << "  echo 'gpuprep: the repositories'\"'\"' index is still missing after apt-get update' >&2\n"
            << "  exit 1\n"
            << "fi\n"
            << "rest=\"$(" << sys::ShellJoin(replan) << ")\"\n"
            << (fetches ? "rm -rf -- \"$tmp\"\n" : "") << "GPUPREP_REPLANNED=1 exec bash -c \"$rest\"\n";
      } else {
        // Stop here: the second script is made now, from the index, and reviewed before it runs.
        const std::string command = sys::ShellJoin(replan) + " > gpuprep-plan-2.sh";
        out << "\n# " << ++n
            << ". stop: the rest of the plan needs the index just fetched; make it, review it, run it\n"
            << "printf '%s\\n' 'gpuprep: the repositories are set up. The rest of the plan (exact versions "
               "from their "
               "index) is a second script: make it, review it, then run it as root:' "
            << sys::ShellQuote("  " + command) << " '  bash gpuprep-plan-2.sh'\n"
            << "exit 0\n";
      }
      break;
    }
  }
  return out.str();
}

nlohmann::json RenderJson(const Plan& plan) {
  using nlohmann::json;
  json layers = json::array();
  for (const auto& l : plan.layers) {
    layers.push_back({{"name", l.name},
                      {"action", DecisionName(l.kind)},
                      {"found", l.found.empty() ? json(nullptr) : json(l.found)},
                      {"wanted", l.wanted},
                      {"detail", l.detail}});
  }
  json steps = json::array();
  for (const auto& s : plan.steps) {
    json actions = json::array();
    for (const auto& a : s.actions) {
      switch (a.kind) {
        case Action::Kind::kRun:
          actions.push_back({{"run", a.argv}, {"env", a.env}});
          break;
        case Action::Kind::kWrite:
          actions.push_back({{"write", a.path}, {"mode", Octal(a.mode)}, {"contents", a.contents}});
          if (!a.diff.empty()) actions.back()["diff"] = a.diff;
          if (!a.link.empty()) actions.back()["link"] = a.link;
          break;
        case Action::Kind::kMove:
          actions.push_back({{"move", {a.path, a.to}}});
          break;
        case Action::Kind::kFetch: {
          json f = {{"fetch", a.url}, {"to", a.path}};
          if (!a.sha256.empty()) f["sha256"] = a.sha256;
          if (!a.fingerprint.empty()) f["fingerprint"] = a.fingerprint;
          actions.push_back(f);
          break;
        }
        case Action::Kind::kVerify:
          actions.push_back({{"verify", a.layer}});
          break;
        case Action::Kind::kRebootCheck:
          actions.push_back({{"reboot_check", true}});
          break;
        case Action::Kind::kRedist: {
          const auto& r = a.redist;
          json j = {{"layer", r.layer},          {"redistrib", r.json_url},    {"components", r.components},
                    {"platform", r.platform},    {"version", r.version},       {"prefix", r.prefix},
                    {"current", r.current_link}, {"ld_so_conf", r.ldconf_path}};
          if (r.cuda_major) j["cuda_major"] = *r.cuda_major;
          if (!r.json_sha256.empty()) j["sha256"] = r.json_sha256;
          actions.push_back({{"redist", j}});
          break;
        }
        case Action::Kind::kPull:
          actions.push_back({{"pull", a.image}, {"digest", a.digest}});
          break;
      }
    }
    steps.push_back({{"id", s.id}, {"layers", s.layers}, {"title", s.title}, {"actions", actions}});
  }
  json move = nullptr;
  if (!plan.move_from.empty()) {
    json changes = json::array();
    for (const auto& c : plan.move_changes)
      changes.push_back({{"field", c.field},
                         {"from", c.from.empty() ? json(nullptr) : json(c.from)},
                         {"to", c.to.empty() ? json(nullptr) : json(c.to)}});
    move = {{"from", plan.move_from}, {"changes", changes}};
  }
  return {{"stack", plan.stack},          {"layers", layers}, {"steps", steps},
          {"blockers", plan.blockers},    {"move", move},     {"reboot", plan.reboot},
          {"left_alone", plan.left_alone}};
}

}  // namespace gp::plan
