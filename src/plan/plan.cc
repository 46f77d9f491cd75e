#include "plan/plan.h"

namespace gp::plan {

Action Action::Run(std::vector<std::string> argv, std::map<std::string, std::string> env) {
  Action a;
  a.kind = Kind::kRun;
  a.argv = std::move(argv);
  a.env = std::move(env);
  return a;
}

Action Action::Write(std::string path, std::string contents, unsigned mode, bool keep_backup) {
  Action a;
  a.kind = Kind::kWrite;
  a.path = std::move(path);
  a.contents = std::move(contents);
  a.mode = mode;
  a.keep_backup = keep_backup;
  return a;
}

Action Action::Move(std::string from, std::string to) {
  Action a;
  a.kind = Kind::kMove;
  a.path = std::move(from);
  a.to = std::move(to);
  return a;
}

Action Action::Verify(std::string layer) {
  Action a;
  a.kind = Kind::kVerify;
  a.layer = std::move(layer);
  return a;
}

const char* DecisionName(LayerDecision::Kind k) {
  switch (k) {
    case LayerDecision::Kind::kNone:
      return "none";
    case LayerDecision::Kind::kInstall:
      return "install";
    case LayerDecision::Kind::kReboot:
      return "reboot";
    case LayerDecision::Kind::kRefused:
      return "refused";
    case LayerDecision::Kind::kSkipped:
      return "skipped";
    case LayerDecision::Kind::kNotApplicable:
      return "n/a";
  }
  return "?";
}

bool Plan::refused() const {
  for (const auto& l : layers)
    if (l.kind == LayerDecision::Kind::kRefused) return true;
  return false;
}

std::vector<std::string> Plan::Refusals() const {
  std::vector<std::string> out;
  for (const auto& l : layers)
    if (l.kind == LayerDecision::Kind::kRefused) out.push_back(l.name + ": " + l.detail);
  return out;
}

}  // namespace gp::plan
