#include "verdict/report.h"

namespace gp::verdict {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kWarn:
      return "warn";
    case Status::kFail:
      return "fail";
    case Status::kSkip:
      return "skip";
  }
  return "skip";
}

int Severity(Status s) {
  switch (s) {
    case Status::kSkip:
      return 0;
    case Status::kOk:
      return 1;
    case Status::kWarn:
      return 2;
    case Status::kFail:
      return 3;
  }
  return 0;
}

void LayerReport::Add(Status s, std::string message, std::optional<std::string> fix_text) {
  if (findings.empty() || Severity(s) > Severity(status)) status = s;
  if (!detail.empty()) detail += "; ";
  detail += message;
  if (fix_text && (s == Status::kWarn || s == Status::kFail)) {
    bool present = false;  // the same fix once, however many findings point at it
    for (const Finding& f : findings)
      present = present || ((f.status == Status::kWarn || f.status == Status::kFail) && f.fix == fix_text);
    if (!present) fix = fix ? *fix + "; " + *fix_text : *fix_text;
  }
  findings.push_back(Finding{s, std::move(message), std::move(fix_text), {}});
}

void LayerReport::Add(std::string code, Status s, std::string message, std::optional<std::string> fix_text) {
  Add(s, std::move(message), std::move(fix_text));
  findings.back().code = std::move(code);
}

}  // namespace gp::verdict
