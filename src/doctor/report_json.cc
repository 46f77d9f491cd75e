#include "doctor/report.h"
#include "probe/host_json.h"
#include "util/error.h"

namespace gp::doctor {

using nlohmann::ordered_json;

Summary Summarize(const std::vector<verdict::LayerReport>& reports) {
  Summary s;
  for (const auto& r : reports) {
    switch (r.status) {
      case verdict::Status::kOk:
        ++s.ok;
        break;
      case verdict::Status::kWarn:
        ++s.warn;
        break;
      case verdict::Status::kFail:
        ++s.fail;
        break;
      case verdict::Status::kSkip:
        ++s.skip;
        break;
    }
  }
  return s;
}

int ExitCodeFor(const std::vector<verdict::LayerReport>& reports) {
  return Summarize(reports).fail > 0 ? kExitFailed : kExitOk;
}

namespace {
ordered_json OrNull(const std::optional<std::string>& s) {
  return s ? ordered_json(*s) : ordered_json(nullptr);
}
}  // namespace

nlohmann::ordered_json ReportJson(const std::string& manifest_name, const probe::HostFacts& host,
                                  const std::vector<verdict::LayerReport>& reports) {
  ordered_json layers = ordered_json::array();
  for (const auto& r : reports) {
    ordered_json findings = ordered_json::array();
    for (const auto& f : r.findings)
      findings.push_back({{"status", verdict::StatusName(f.status)},
                          {"code", f.code},
                          {"message", f.message},
                          {"fix", OrNull(f.fix)}});
    layers.push_back({{"name", r.name},
                      {"status", verdict::StatusName(r.status)},
                      {"found", OrNull(r.found)},
                      {"wanted", r.wanted},
                      {"detail", r.detail},
                      {"fix", OrNull(r.fix)},
                      {"findings", findings}});
  }
  Summary s = Summarize(reports);
  ordered_json doc;
  doc["gpuprep"] = GPUPREP_VERSION;
  doc["manifest"] = manifest_name;
  doc["host"] = probe::HostToJson(host);
  doc["layers"] = layers;
  doc["summary"] = {{"ok", s.ok}, {"warn", s.warn}, {"fail", s.fail}, {"skip", s.skip}};
  return doc;
}

}  // namespace gp::doctor
