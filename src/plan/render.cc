#include "plan/render.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "plan/render_parts.h"
#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::plan {
namespace {

bool EnvName(const std::string& k) {
  if (k.empty() || (k[0] >= '0' && k[0] <= '9')) return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace

namespace detail {

std::string Octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

std::string DescribeRedist(const redist::Request& r) {
  std::string what = Join(r.components, ", ") + " " + r.version + " (" + r.platform +
                     (r.cuda_major ? ", cuda" + std::to_string(*r.cuda_major) : "") + ")";
  return "install NVIDIA redistributable " + what + " listed in " + r.json_url +
         (r.json_sha256.empty() ? "" : " (sha256 " + r.json_sha256 + ")") + " into " + r.prefix +
         ", checking each archive's sha256, then point " + r.current_link + " at it and write " +
         r.ldconf_path;
}

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

}  // namespace detail

namespace {

using detail::DescribeRedist;
using detail::EnvPrefix;
using detail::Octal;

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

// A kRedist action's request as JSON.
nlohmann::json RedistJson(const redist::Request& r) {
  nlohmann::json j = {{"layer", r.layer},          {"redistrib", r.json_url},    {"components", r.components},
                      {"platform", r.platform},    {"version", r.version},       {"prefix", r.prefix},
                      {"current", r.current_link}, {"ld_so_conf", r.ldconf_path}};
  if (r.cuda_major) j["cuda_major"] = *r.cuda_major;
  if (!r.json_sha256.empty()) j["sha256"] = r.json_sha256;
  return j;
}

// One action as JSON: an object keyed by what it does.
nlohmann::json ActionJson(const Action& a) {
  using nlohmann::json;
  switch (a.kind) {
    case Action::Kind::kRun:
      return {{"run", a.argv}, {"env", a.env}};
    case Action::Kind::kWrite: {
      json w = {{"write", a.path}, {"mode", Octal(a.mode)}, {"contents", a.contents}};
      if (!a.diff.empty()) w["diff"] = a.diff;
      if (!a.link.empty()) w["link"] = a.link;
      return w;
    }
    case Action::Kind::kMove:
      return {{"move", {a.path, a.to}}};
    case Action::Kind::kFetch: {
      json f = {{"fetch", a.url}, {"to", a.path}};
      if (!a.sha256.empty()) f["sha256"] = a.sha256;
      if (!a.fingerprint.empty()) f["fingerprint"] = a.fingerprint;
      return f;
    }
    case Action::Kind::kVerify:
      return {{"verify", a.layer}};
    case Action::Kind::kRebootCheck:
      return {{"reboot_check", true}};
    case Action::Kind::kRedist:
      return {{"redist", RedistJson(a.redist)}};
    case Action::Kind::kPull:
      return {{"pull", a.image}, {"digest", a.digest}};
  }
  return nullptr;
}

// A move from another stack (its pinned values that change), or null.
nlohmann::json MoveJson(const Plan& plan) {
  using nlohmann::json;
  if (plan.move_from.empty()) return nullptr;
  json changes = json::array();
  for (const auto& c : plan.move_changes)
    changes.push_back({{"field", c.field},
                       {"from", c.from.empty() ? json(nullptr) : json(c.from)},
                       {"to", c.to.empty() ? json(nullptr) : json(c.to)}});
  return {{"from", plan.move_from}, {"changes", changes}};
}

}  // namespace

// Values found on the host (versions, a recorded stack, a file's lines in a diff) are escaped where printed.
std::string RenderText(const Plan& plan) {
  std::ostringstream out;
  const auto T = [](const std::string& s) { return TerminalSafe(s); };
  out << "stack " << T(plan.stack) << "\n";
  if (!plan.move_from.empty()) {
    out << "moving this host from stack " << T(plan.move_from) << " (the stack it runs) to " << T(plan.stack)
        << ":\n";
    for (const auto& c : plan.move_changes)
      out << "  " << T(c.field) << ": " << (c.from.empty() ? "-" : T(c.from)) << " -> "
          << (c.to.empty() ? "-" : T(c.to)) << "\n";
    if (plan.move_changes.empty()) out << "  no pinned value changes\n";
  }
  for (const auto& l : plan.layers) {
    char line[64];
    std::snprintf(line, sizeof line, "  %-14s %-8s ", l.name.c_str(), DecisionName(l.kind));
    out << line;
    if (!l.wanted.empty())
      out << T(l.wanted) << " (found: " << (l.found.empty() ? "none" : T(l.found)) << ") ";
    out << T(l.detail) << "\n";
  }
  if (!plan.left_alone.empty())
    out << "left alone (not selected): " << T(Join(plan.left_alone, ", ")) << "\n";
  for (const auto& b : plan.blockers) out << "blocked: " << T(b) << "\n";
  if (plan.reboot)
    out << "reboot: the new driver loads only after a reboot (apply exits 3; with --reboot it reboots, and "
           "resumes after the boot)\n";
  if (plan.steps.empty()) {
    out << "nothing to do\n";
    return out.str();
  }
  int n = 0;
  for (const auto& s : plan.steps) {
    out << ++n << ". " << T(s.title) << " [" << T(s.id) << "]\n";
    for (const auto& a : s.actions) {
      out << "     " << T(Describe(a)) << "\n";
      for (const auto& line : Split(a.diff, '\n'))
        if (!line.empty()) out << "       " << T(line) << "\n";
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
    for (const auto& a : s.actions) actions.push_back(ActionJson(a));
    steps.push_back({{"id", s.id}, {"layers", s.layers}, {"title", s.title}, {"actions", actions}});
  }
  return {{"stack", plan.stack},          {"layers", layers},       {"steps", steps},
          {"blockers", plan.blockers},    {"move", MoveJson(plan)}, {"reboot", plan.reboot},
          {"left_alone", plan.left_alone}};
}

}  // namespace gp::plan
