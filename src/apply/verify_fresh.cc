#include "apply/verify_fresh.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "util/input.h"
#include "util/strings.h"

namespace gp::apply {

bool VerifiesInFreshProcess(const std::string& layer) {
  return layer == "cuda" || layer == "cudnn" || layer == "nccl";
}

std::vector<std::string> FreshVerifyArgv(const std::string& self, const std::string& manifest,
                                         const std::string& layer) {
  std::vector<std::string> argv = {self};
  if (!manifest.empty()) argv.insert(argv.end(), {"--manifest", manifest});
  argv.insert(argv.end(), {"-q", "--json", "verify", "--only", layer});
  return argv;
}

FreshVerify VerifyInFreshProcess(sys::CommandRunner& runner, const std::vector<std::string>& argv) {
  sys::Command cmd;
  cmd.argv = argv;
  cmd.timeout = std::chrono::minutes(5);
  const auto res = runner.Run(cmd);
  const std::string how = "verify in a new process (" + sys::ShellJoin(argv) + ")";
  if (res.not_found) return {false, how + ": " + argv[0] + " not found"};
  if (res.timed_out) return {false, how + ": timed out"};
  // Its own output, read as data: one JSON object (cli/verify.cc) whose one layer is the verdict.
  const auto doc = nlohmann::json::parse(res.out, nullptr, false);
  const bool one = doc.is_object() && doc.contains("layers") && doc["layers"].is_array() &&
                   doc["layers"].size() == 1 && doc["layers"][0].is_object();
  const nlohmann::json layer = one ? doc["layers"][0] : nlohmann::json::object();
  auto text = [&layer](const char* key) {
    return layer.contains(key) && layer[key].is_string() ? layer[key].get<std::string>() : std::string();
  };
  const std::string status = text("status");
  if (status.empty() || (res.exit_code != 0 && res.exit_code != 1)) {
    const std::string why = LastLine(res.err);
    return {false, how + " exited with " + std::to_string(res.exit_code) +
                       (why.empty() ? "" : ": " + TerminalSafe(why))};
  }
  std::string detail = text("detail");
  if (status == "fail" || res.exit_code != 0) {
    if (!text("fix").empty()) detail += " (fix: " + text("fix") + ")";
    return {false, TerminalSafe(detail)};
  }
  return {true, TerminalSafe(detail)};
}

}  // namespace gp::apply
