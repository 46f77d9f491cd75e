// `gpuprep plan --format sh`: the plan as a bash script an admin can review and run (render.h).
#include <algorithm>
#include <initializer_list>
#include <ostream>
#include <sstream>

#include "plan/render.h"
#include "plan/render_parts.h"
#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::plan {
namespace {

using detail::DescribeRedist;
using detail::EnvPrefix;
using detail::Octal;

// Text inside a `#` comment: one line, with control characters shown escaped.
std::string Comment(const std::string& s) { return TerminalSafe(s); }

// `contents` ends with a newline (the caller checks); the marker appears nowhere in it.
std::string Heredoc(const std::string& contents) {
  std::string marker = "GPUPREP_EOF";
  while (contents.find(marker) != std::string::npos) marker += "_";
  return "<<'" + marker + "'\n" + contents + marker + "\n";
}

// Like apply: the downloaded key file ("$tmp/keyN") imported into a GnuPG home of its own and the pinned
// primary key alone exported (with its subkeys); only that reaches the repository's keyring, and only after
// gpg reads exactly that one primary key in it. gpg --import's status is not the check (it is non-zero when
// any other key of the file is refused); what it exported is.
void PinnedKeyOnly(std::ostream& out, const Action& a, int n) {
  const std::string key = "\"$tmp/key" + std::to_string(n) + "\"";
  const std::string pinned = "\"$tmp/key" + std::to_string(n) + ".pinned\"";
  const std::string home = "\"$tmp/gnupg" + std::to_string(n) + "\"";
  const std::string gpg = "gpg --batch --quiet --no-autostart --homedir " + home;
  const std::string fpr = sys::ShellQuote(a.fingerprint);
  out << "mkdir -m 0700 " << home << "\n"
      << gpg << " --import " << key << " || true\n"
      << gpg << " --export " << fpr << " > " << pinned << "\n"
      << "if [ \"$(" << gpg << " --show-keys --with-colons " << pinned
      << " | awk -F: '$1 == \"pub\" { p = 1; next } $1 == \"fpr\" && p { print $10; p = 0 }')\" != " << fpr
      << " ]; then\n"
      << "  echo " << sys::ShellQuote("gpuprep: " + a.url + " does not hold the pinned key " + a.fingerprint)
      << " >&2; exit 1\nfi\n"
      << "gpuprep_write " << sys::ShellQuote(a.path) << " " << Octal(a.mode) << " backup < " << pinned
      << "\n";
}

// The script's head: the shell options, then as comments the stack, a move's changes, the reboot and each
// layer's decision; a blocker stops the script before anything runs.
void ShHeader(std::ostream& out, const Plan& plan) {
  out << "#!/bin/bash\n"
      << "# gpuprep plan for stack " << Comment(plan.stack)
      << ": the commands `gpuprep apply` runs, in order.\n"
      << "# Review, then run as root. Each command is exactly one argv; nothing relies on word splitting.\n"
      << "set -eu\n"
      << "if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi\n";
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
}

// Whether any step of the plan has an action of one of `kinds`.
bool ShAnyAction(const Plan& plan, std::initializer_list<Action::Kind> kinds) {
  for (const auto& s : plan.steps)
    for (const auto& a : s.actions)
      if (std::find(kinds.begin(), kinds.end(), a.kind) != kinds.end()) return true;
  return false;
}

// The write apply makes (sys/fs.h WriteAtomic): the bytes into a fresh temporary beside the file (mktemp:
// O_EXCL, never through a planted link), the mode set, the old file kept as the next free
// FILE.gpuprep-bak[.N] (never over an earlier one, none when one already holds the same bytes), then one
// rename over the file. A directory in its place is refused, as apply's rename refuses it.
void ShWriteFunctions(std::ostream& out) {
  out << "gpuprep_backup() {\n"
      << "  [ -e \"$1\" ] || return 0\n"
      << "  local b=\"$1.gpuprep-bak\" i=0\n"
      << "  while [ -e \"$b\" ] || [ -L \"$b\" ]; do\n"
      << "    if cmp -s -- \"$1\" \"$b\"; then return 0; fi\n"
      << "    i=$((i + 1))\n"
      << "    b=\"$1.gpuprep-bak.$i\"\n"
      << "  done\n"
      << "  cp -p -- \"$1\" \"$b\"\n"
      << "}\n"
      << "gpuprep_write() {\n"
      << "  if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then echo \"gpuprep: $1: is a directory\" >&2; exit 1; "
         "fi\n"
      << "  mkdir -p -- \"$(dirname -- \"$1\")\"\n"
      << "  local new\n"
      << "  new=\"$(mktemp -- \"$1.gpuprep-new.XXXXXXXXXXXXXXXX\")\"\n"
      << "  cat > \"$new\"\n"
      << "  chmod \"$2\" \"$new\"\n"
      << "  if [ \"$3\" = backup ]; then gpuprep_backup \"$1\"; fi\n"
      << "  mv -f -T -- \"$new\" \"$1\"\n"
      << "}\n";
}

// A kWrite action: the file written through gpuprep_write.
void ShWrite(std::ostream& out, const Action& a) {
  const std::string p = sys::ShellQuote(a.path);
  if (!a.link.empty()) out << "# " << Comment(a.link) << " is a link to this file: written through it\n";
  const std::string call =
      "gpuprep_write " + p + " " + Octal(a.mode) + (a.keep_backup ? " backup" : " replace");
  // A here-document for text that ends with a newline (readable); other contents byte for byte
  // through printf, so the file is exactly what apply writes.
  if (a.contents.empty() || a.contents.back() != '\n')
    out << "printf '%s' " << sys::ShellQuote(a.contents) << " | " << call << "\n";
  else
    out << call << " " << Heredoc(a.contents);
}

// A kFetch action of step `n`: the key downloaded to "$tmp/keyN", checked, then written as a keyring.
void ShFetch(std::ostream& out, const Action& a, int n) {
  const std::string tmp = "\"$tmp/key" + std::to_string(n) + "\"";
  const std::string dst = sys::ShellQuote(a.path);
  // Like apply: TLS verified by curl, and a redirect never leaves https.
  out << "curl --fail --silent --show-error --location "
      << (StartsWith(a.url, "https://") ? "--proto-redir =https " : "") << "--output " << tmp << " "
      << sys::ShellQuote(a.url) << "\n";
  // The same checks as apply: the sha256 when pinned, and the fingerprint when pinned.
  if (!a.sha256.empty())
    out << "echo " << sys::ShellQuote(a.sha256) << "\"  $tmp/key" << n << "\" | sha256sum --check --quiet\n";
  if (!a.fingerprint.empty()) {
    PinnedKeyOnly(out, a, n);
  } else {
    out << "if grep -q 'BEGIN PGP PUBLIC KEY BLOCK' " << tmp << "; then gpg --batch --yes --dearmor --output "
        << tmp << ".gpg " << tmp << "; else cp -- " << tmp << " " << tmp << ".gpg; fi\n"
        << "gpuprep_write " << dst << " " << Octal(a.mode) << " backup < " << tmp << ".gpg\n";
  }
}

// One action of step `n` as the commands that do what apply does.
void ShAction(std::ostream& out, const Action& a, int n, const ShOptions& o) {
  switch (a.kind) {
    case Action::Kind::kRun:
      out << EnvPrefix(a) << sys::ShellJoin(a.argv) << "\n";
      break;
    case Action::Kind::kWrite:
      ShWrite(out, a);
      break;
    case Action::Kind::kMove:
      out << "mv -- " << sys::ShellQuote(a.path) << " " << sys::ShellQuote(a.to) << "\n";
      break;
    case Action::Kind::kFetch:
      ShFetch(out, a, n);
      break;
    case Action::Kind::kVerify: {
      std::vector<std::string> verify = GpuprepArgv(o, "verify");
      verify.insert(verify.end(), {"--only", a.layer});
      out << sys::ShellJoin(verify) << "\n";
      break;
    }
    case Action::Kind::kPull:
      out << "docker pull " << sys::ShellQuote(a.image) << "\n";
      if (!a.digest.empty())
        out << "docker image inspect --format '{{join .RepoDigests \"\\n\"}}' " << sys::ShellQuote(a.image)
            << " | grep -qF " << sys::ShellQuote("@" + a.digest) << "\n";
      break;
    case Action::Kind::kRebootCheck:
      out << "if [ -e /var/run/reboot-required ] || ! grep -qs " << sys::ShellQuote(" " + a.contents + " ")
          << " /proc/driver/nvidia/version; then\n"
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

// After apt.update, as step `n`, when the plan needs the repositories' index: the exact versions, and the
// packages apt installs with them, come from that index, which is on this host only now. The rest of the
// plan is gpuprep's own, made from it (the same rule and closure apply uses), with every flag of this plan
// and the stack pinned by its sha256: run at once (--one-shot), or made as a second script to review.
void ShReplan(std::ostream& out, const ShOptions& o, int n, bool fetches) {
  std::vector<std::string> replan = GpuprepArgv(o, "plan");
  replan.insert(replan.end(), {"--format", "sh"});
  if (o.one_shot) replan.push_back("--one-shot");
  if (!o.only.empty()) replan.insert(replan.end(), {"--only", Join(o.only, ",")});
  if (!o.skip.empty()) replan.insert(replan.end(), {"--skip", Join(o.skip, ",")});
  if (o.restart_docker) replan.push_back("--restart-docker");
  if (o.one_shot) {
    out << "\n# " << n
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
    out << "\n# " << n
        << ". stop: the rest of the plan needs the index just fetched; make it, review it, run it\n"
        << "printf '%s\\n' 'gpuprep: the repositories are set up. The rest of the plan (exact versions "
           "from their "
           "index) is a second script: make it, review it, then run it as root:' "
        << sys::ShellQuote("  " + command) << " '  bash gpuprep-plan-2.sh'\n"
        << "exit 0\n";
  }
}

}  // namespace

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
  ShHeader(out, plan);
  const bool fetches = ShAnyAction(plan, {Action::Kind::kFetch});
  if (fetches) out << "tmp=\"$(mktemp -d)\"\ntrap 'rm -rf -- \"$tmp\"' EXIT\n";
  if (ShAnyAction(plan, {Action::Kind::kWrite, Action::Kind::kFetch})) ShWriteFunctions(out);
  int n = 0;
  for (const auto& s : plan.steps) {
    out << "\n# " << ++n << ". " << Comment(s.title) << " [" << Comment(s.id) << "]\n";
    for (const auto& a : s.actions) ShAction(out, a, n, o);
    if (plan.needs_index && s.id == "apt.update") {
      ShReplan(out, o, n + 1, fetches);
      break;
    }
  }
  return out.str();
}

}  // namespace gp::plan
