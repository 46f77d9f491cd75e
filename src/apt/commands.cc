#include "apt/commands.h"

#include <cstdlib>
#include <stdexcept>

#include "util/input.h"
#include "util/strings.h"

namespace gp::apt {

std::map<std::string, std::string> AptEnv() { return {{"DEBIAN_FRONTEND", "noninteractive"}}; }

namespace {

// "--", then the package words, each checked (commands.h).
void AppendPackages(std::vector<std::string>& argv, const std::vector<std::string>& packages, bool globs) {
  argv.push_back("--");
  for (const auto& p : packages) {
    const bool glob = globs && EndsWith(p, "-*") && p.find('=') != std::string::npos &&
                      ValidPackageWord(p.substr(0, p.size() - 2));
    if (!glob && !ValidPackageWord(p)) throw std::invalid_argument("not a package word: " + TerminalSafe(p));
    argv.push_back(p);
  }
}

}  // namespace

std::vector<std::string> InstallArgv(const std::vector<std::string>& packages, const AptOptions& opts) {
  std::vector<std::string> argv = {"apt-get", "-y",
                                   "-o",      "Dpkg::Options::=--force-confdef",
                                   "-o",      "Dpkg::Options::=--force-confold",
                                   "-o",      "DPkg::Lock::Timeout=" + std::to_string(opts.lock_timeout_s)};
  if (opts.status_fd) {
    argv.push_back("-o");
    argv.push_back("APT::Status-Fd=" + std::to_string(kStatusFd));
  }
  if (opts.allow_change_held) argv.push_back("--allow-change-held-packages");
  argv.push_back("install");
  AppendPackages(argv, packages, /*globs=*/true);
  return argv;
}

std::vector<std::string> UpdateArgv(const AptOptions& opts) {
  // Uncompressed lists: gpuprep reads the Packages files to resolve exact versions (Docker-based images set
  // Acquire::GzipIndexes, which would store them as .lz4).
  return {"apt-get",
          "-o",
          "DPkg::Lock::Timeout=" + std::to_string(opts.lock_timeout_s),
          "-o",
          "Acquire::GzipIndexes=false",
          "update"};
}

std::vector<std::string> HoldArgv(const std::vector<std::string>& packages) {
  std::vector<std::string> argv = {"apt-mark", "hold"};
  AppendPackages(argv, packages, false);
  return argv;
}

std::vector<std::string> UnholdArgv(const std::vector<std::string>& packages) {
  std::vector<std::string> argv = {"apt-mark", "unhold"};
  AppendPackages(argv, packages, false);
  return argv;
}

std::vector<std::string> DpkgRepairArgv() { return {"dpkg", "--configure", "-a"}; }

std::string ProgressText(const std::string& status_line) {
  // pmstatus:<pkg>:<percent>:<message>, dlstatus:<n>:<percent>:<message>
  auto fields = Split(status_line, ':');
  if (fields.size() < 4 || (fields[0] != "pmstatus" && fields[0] != "dlstatus")) return "";
  std::string message = status_line.substr(fields[0].size() + fields[1].size() + fields[2].size() + 3);
  double pct = std::atof(fields[2].c_str());
  return std::to_string(static_cast<int>(pct)) + "% " + message;
}

}  // namespace gp::apt
