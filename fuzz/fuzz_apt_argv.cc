// What reaches apt-get, apt-mark and dpkg (plan/planner.cc, apt/commands.h) from outside input: a stack or
// site file, a repository's Packages index, the dpkg status file and gpuprep's pins file, all four from the
// fuzzer (split at \x01). The plan is built as apply builds it (with the index, and offline). Properties of
// every apt-get / apt-mark / dpkg argv in the plan:
//  - every element after "--" is a package word (NAME or NAME=VERSION, Debian Policy 5.6.1 and 5.6.12; an
//    offline install line may end a version in "-*"), and there is at most one "--";
//  - no element before "--" comes from outside: each is one of the fixed words gpuprep itself writes;
//  - dpkg is only ever `dpkg --configure -a`.
// Planning writes nothing: the in-memory Fs records no write, removal, rename or directory made.
// A gp::Error (bad input, exit 2) is a fine outcome; any other exception (the argv builders throw on a word
// that is not a package) is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "apt/index.h"
#include "host/files.h"
#include "layers/plan.h"
#include "layers/table.h"
#include "manifest/loader.h"
#include "plan/planner.h"
#include "support/map_fs.h"
#include "util/error.h"
#include "util/input.h"

namespace {

bool Digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// The words gpuprep writes before "--" (apt/commands.cc, apply's own argv).
bool FixedWord(const std::string& w) {
  static const std::set<std::string> kWords = {"apt-get",
                                               "apt-mark",
                                               "dpkg",
                                               "-y",
                                               "-o",
                                               "Dpkg::Options::=--force-confdef",
                                               "Dpkg::Options::=--force-confold",
                                               "APT::Status-Fd=3",
                                               "--allow-change-held-packages",
                                               "install",
                                               "hold",
                                               "unhold",
                                               "update",
                                               "Acquire::GzipIndexes=false",
                                               "--configure",
                                               "-a"};
  const std::string lock = "DPkg::Lock::Timeout=";
  return kWords.count(w) > 0 || (w.compare(0, lock.size(), lock) == 0 && Digits(w.substr(lock.size())));
}

void CheckArgv(const std::vector<std::string>& argv) {
  if (argv.empty()) return;
  if (argv[0] != "apt-get" && argv[0] != "apt-mark" && argv[0] != "dpkg") return;
  if (argv[0] == "dpkg" && argv != std::vector<std::string>{"dpkg", "--configure", "-a"}) std::abort();
  size_t i = 0;
  for (; i < argv.size() && argv[i] != "--"; ++i)
    if (!FixedWord(argv[i])) std::abort();
  const bool install = std::find(argv.begin(), argv.end(), "install") != argv.end();
  for (++i; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    const bool glob = install && w.size() > 2 && w.compare(w.size() - 2, 2, "-*") == 0 &&
                      gp::ValidPackageWord(w.substr(0, w.size() - 2)) && w.find('=') != std::string::npos;
    if (w == "--" || !(gp::ValidPackageWord(w) || glob)) std::abort();
  }
}

// The planner only reads: anything it asked the Fs to change is a finding.
void CheckNoChanges(const gp::test::MapFs& fs) {
  if (!fs.written.empty() || !fs.removed.empty() || !fs.renamed.empty() || !fs.dirs.empty()) std::abort();
}

void CheckPlan(const gp::plan::Plan& p) {
  for (const auto& s : p.steps)
    for (const auto& a : s.actions)
      if (a.kind == gp::plan::Action::Kind::kRun) CheckArgv(a.argv);
}

std::vector<std::string> Parts(const std::string& in) {
  std::vector<std::string> out(1);
  for (char c : in) {
    if (c == '\x01' && out.size() < 4)
      out.emplace_back();
    else
      out.back() += c;
  }
  out.resize(4);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = Parts(std::string(reinterpret_cast<const char*>(data), size));
  gp::manifest::Stack stack;
  try {
    stack = gp::manifest::ParseStack(parts[0], "fuzz.yaml", gp::manifest::LoadContext{});
  } catch (const gp::Error&) {
    return 0;
  }
  gp::probe::HostFacts facts;
  facts.os = {"ubuntu", "22.04", "Ubuntu 22.04.4 LTS", "jammy"};
  facts.kernel = "5.15.0-105-generic";
  facts.arch = "x86_64";
  for (int i = 0; i < 2; ++i) {
    gp::probe::Gpu g;
    g.index = i;
    g.pci = "0000:1" + std::to_string(i) + ":00.0";
    g.device_id = "0x2330";
    g.name = "H100 SXM5 80GB";
    g.architecture = "hopper";
    g.known = true;
    facts.gpus.push_back(g);
  }
  facts.nvswitch_count = parts[1].size() % 2 ? 4 : 0;
  gp::test::MapFs fs;
  if (!parts[2].empty()) fs.files["/var/lib/dpkg/status"] = parts[2];
  if (!parts[3].empty()) fs.files["/etc/apt/preferences.d/gpuprep"] = parts[3];
  gp::apt::Index index;
  gp::apt::ParsePackages(parts[1], "amd64", index);
  gp::plan::PlanInput in;
  in.stack = &stack;
  in.facts = &facts;
  const gp::plan::HostState host = gp::host::ReadFiles(fs, stack, facts, gp::layers::HostReads(stack, facts));
  in.host = &host;
  const gp::apt::Index* const indexes[] = {nullptr, &index};  // offline, and with the repository's index
  for (const gp::apt::Index* idx : indexes) {
    in.index = idx;
    try {
      CheckPlan(gp::layers::BuildPlan(in));
      in.only = {"container_toolkit"};  // and a run that leaves the other layers alone
      CheckPlan(gp::layers::BuildPlan(in));
      in.only.clear();
    } catch (const gp::Error&) {
      in.only.clear();
    }
  }
  CheckNoChanges(fs);
  return 0;
}
