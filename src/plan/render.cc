#include "plan/render.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sys/process.h"
#include "util/strings.h"

namespace gp::plan {
namespace {

std::string Octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

std::string EnvPrefix(const Action& a) {
  std::string out;
  for (const auto& [k, v] : a.env) out += k + "=" + sys::ShellQuote(v) + " ";
  return out;
}

// The text form of one action (also the body of the sh form for kRun).
std::string Describe(const Action& a) {
  switch (a.kind) {
    case Action::Kind::kRun: return EnvPrefix(a) + sys::ShellJoin(a.argv);
    case Action::Kind::kWrite: return "write " + a.path + " (mode " + Octal(a.mode) + ")";
    case Action::Kind::kMove: return "move " + a.path + " to " + a.to;
    case Action::Kind::kFetch:
      return "fetch " + a.url + " -> " + a.path + " (" +
             (a.sha256.empty() ? "fingerprint " + a.fingerprint : "sha256 " + a.sha256) + ")";
    case Action::Kind::kVerify: return "verify " + a.layer;
    case Action::Kind::kRebootCheck: return "check whether a reboot is required";
  }
  return "";
}

std::string Heredoc(const std::string& contents) {
  std::string marker = "GPUPREP_EOF";
  while (contents.find(marker) != std::string::npos) marker += "_";
  std::string body = contents;
  if (!body.empty() && body.back() != '\n') body += '\n';
  return "<<'" + marker + "'\n" + body + marker + "\n";
}

}  // namespace

std::string RenderText(const Plan& plan) {
  std::ostringstream out;
  out << "stack " << plan.stack << "\n";
  for (const auto& l : plan.layers) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-14s %-8s ", l.name.c_str(), DecisionName(l.kind));
    out << line;
    if (!l.wanted.empty()) out << l.wanted << " (found: " << (l.found.empty() ? "none" : l.found) << ") ";
    out << l.detail << "\n";
  }
  for (const auto& b : plan.blockers) out << "blocked: " << b << "\n";
  if (plan.steps.empty()) {
    out << "nothing to do\n";
    return out.str();
  }
  int n = 0;
  for (const auto& s : plan.steps) {
    out << ++n << ". " << s.title << " [" << s.id << "]\n";
    for (const auto& a : s.actions) out << "     " << Describe(a) << "\n";
  }
  return out.str();
}

std::string RenderSh(const Plan& plan, const std::string& gpuprep) {
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# gpuprep plan for stack " << plan.stack << ": the commands `gpuprep apply` runs, in order.\n"
      << "# Review, then run as root. Each command is exactly one argv; nothing relies on word splitting.\n"
      << "set -euo pipefail\n";
  for (const auto& l : plan.layers)
    out << "# layer " << l.name << ": " << DecisionName(l.kind) << (l.detail.empty() ? "" : " - " + l.detail) << "\n";
  for (const auto& b : plan.blockers) out << "echo " << sys::ShellQuote("blocked: " + b) << " >&2; exit 1\n";
  if (plan.steps.empty()) out << "# nothing to do\n";
  bool fetches = false;
  for (const auto& s : plan.steps)
    for (const auto& a : s.actions) fetches = fetches || a.kind == Action::Kind::kFetch;
  if (fetches) out << "tmp=\"$(mktemp -d)\"\ntrap 'rm -rf -- \"$tmp\"' EXIT\n";
  std::vector<std::string> verify = {gpuprep};
  if (!plan.manifest.empty()) verify.insert(verify.end(), {"--manifest", plan.manifest});
  verify.insert(verify.end(), {"verify", "--only"});
  if (!plan.unresolved.empty()) {
    // The rule of apt/resolve.h: the highest version, among the stack repositories' own, whose upstream part
    // is the pin and whose revision, where it names a CUDA build, names the stack's.
    out << "\n# Exact versions are resolved from the repositories' index when this script runs.\n"
        << "gp_resolve() {  # NAME UPSTREAM CUDA URL...\n"
        << "  local name=$1 up=$2 cuda=$3 best='' v origin u ok; shift 3\n"
        << "  while IFS='|' read -r _ v origin; do\n"
        << "    v=${v// /}; ok=''\n"
        << "    for u in \"$@\"; do case \"$origin\" in *\"${u%/}\"*) ok=1 ;; esac; done\n"
        << "    [ -n \"$ok\" ] || continue\n"
        << "    case \"$v\" in \"$up\"-*) ;; *) continue ;; esac\n"
        << "    if [ -n \"$cuda\" ]; then case \"$v\" in *+cuda*) case \"$v\" in *\"+cuda$cuda\" | *\"+cuda$cuda\"[!0-9.]*) ;; *) continue ;; esac ;; esac; fi\n"
        << "    if [ -z \"$best\" ] || dpkg --compare-versions \"$v\" gt \"$best\"; then best=$v; fi\n"
        << "  done < <(apt-cache madison \"$name\")\n"
        << "  if [ -z \"$best\" ]; then echo \"gpuprep: $name $up is not in the repository\" >&2; return 1; fi\n"
        << "  printf '%s=%s\\n' \"$name\" \"$best\"\n"
        << "}\n";
  }
  int n = 0;
  for (const auto& s : plan.steps) {
    out << "\n# " << ++n << ". " << s.title << " [" << s.id << "]\n";
    for (const auto& a : s.actions) {
      switch (a.kind) {
        case Action::Kind::kRun: {
          std::vector<std::string> argv = a.argv;
          std::vector<std::string> vars;
          for (auto& w : argv) {
            auto u = plan.unresolved.find(w);
            if (u == plan.unresolved.end()) continue;
            const std::string var = "pin" + std::to_string(vars.size() + 1);
            std::vector<std::string> call = {"gp_resolve", u->second.name, u->second.upstream, u->second.cuda};
            call.insert(call.end(), plan.repo_urls.begin(), plan.repo_urls.end());
            out << var << "=\"$(" << sys::ShellJoin(call) << ")\"\n";
            vars.push_back(var);
            w = "\x01" + var;
          }
          std::string line = EnvPrefix(a) + sys::ShellJoin(argv);
          for (const auto& var : vars) {  // the placeholders, quoted or not, become "$pinN"
            for (const std::string& form : {sys::ShellQuote("\x01" + var), "\x01" + var}) {
              size_t at = line.find(form);
              if (at != std::string::npos) {
                line.replace(at, form.size(), "\"$" + var + "\"");
                break;
              }
            }
          }
          out << line << "\n";
          break;
        }
        case Action::Kind::kWrite: {
          const std::string p = sys::ShellQuote(a.path);
          out << "mkdir -p -- \"$(dirname -- " << p << ")\"\n";
          out << "cat > " << p << ".gpuprep-new " << Heredoc(a.contents);
          out << "chmod " << Octal(a.mode) << " " << p << ".gpuprep-new\n";
          if (a.keep_backup) out << "if [ -e " << p << " ]; then cp -p -- " << p << " " << p << ".gpuprep-bak; fi\n";
          out << "mv -f -- " << p << ".gpuprep-new " << p << "\n";
          break;
        }
        case Action::Kind::kMove:
          out << "mv -- " << sys::ShellQuote(a.path) << " " << sys::ShellQuote(a.to) << "\n";
          break;
        case Action::Kind::kFetch: {
          const std::string tmp = "\"$tmp/key" + std::to_string(n) + "\"";
          const std::string dst = sys::ShellQuote(a.path);
          out << "curl --fail --silent --show-error --location --output " << tmp << " " << sys::ShellQuote(a.url)
              << "\n";
          if (!a.sha256.empty()) {
            out << "echo " << sys::ShellQuote(a.sha256) << "\"  $tmp/key" << n << "\" | sha256sum --check --quiet\n";
          } else {
            out << "gpg --batch --show-keys --with-colons " << tmp << " | grep -q "
                << sys::ShellQuote("^fpr:::::::::" + a.fingerprint + ":") << "\n";
          }
          out << "if grep -q 'BEGIN PGP PUBLIC KEY BLOCK' " << tmp << "; then gpg --batch --yes --dearmor --output "
              << dst << " " << tmp << "; else install -m " << Octal(a.mode) << " " << tmp << " " << dst
              << "; fi\n";
          break;
        }
        case Action::Kind::kVerify:
          verify.push_back(a.layer);
          out << sys::ShellJoin(verify) << "\n";
          verify.pop_back();
          break;
        case Action::Kind::kRebootCheck:
          out << "if [ -e /var/run/reboot-required ] || ! grep -qs " << sys::ShellQuote(" " + a.contents + " ")
              << " /proc/driver/nvidia/version; then\n"
              << "  echo 'gpuprep: a reboot is required; reboot, then run the rest of this script' >&2\n"
              << "  exit 3\n"
              << "fi\n";
          break;
      }
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
        case Action::Kind::kRun: actions.push_back({{"run", a.argv}, {"env", a.env}}); break;
        case Action::Kind::kWrite:
          actions.push_back({{"write", a.path}, {"mode", Octal(a.mode)}, {"contents", a.contents}});
          break;
        case Action::Kind::kMove: actions.push_back({{"move", {a.path, a.to}}}); break;
        case Action::Kind::kFetch: {
          json f = {{"fetch", a.url}, {"to", a.path}};
          if (!a.sha256.empty()) f["sha256"] = a.sha256;
          if (!a.fingerprint.empty()) f["fingerprint"] = a.fingerprint;
          actions.push_back(f);
          break;
        }
        case Action::Kind::kVerify: actions.push_back({{"verify", a.layer}}); break;
        case Action::Kind::kRebootCheck: actions.push_back({{"reboot_check", true}}); break;
      }
    }
    steps.push_back({{"id", s.id}, {"layers", s.layers}, {"title", s.title}, {"actions", actions}});
  }
  return {{"stack", plan.stack}, {"layers", layers}, {"steps", steps}, {"blockers", plan.blockers}};
}

}  // namespace gp::plan
