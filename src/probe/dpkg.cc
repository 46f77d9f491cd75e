// The dpkg database read directly (/var/lib/dpkg/status and the updates/ journal): no dpkg-query spawn.
#include <algorithm>

#include "probe/parsers.h"
#include "probe/state.h"
#include "probe/steps.h"
#include "sys/fs_errors.h"
#include "util/error.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

// The third word of "want flag state" ("installed", "half-configured", ...); empty when malformed.
// Words are split at blanks, as SplitWords does, without building them: this runs for every package.
std::string_view StateWord(std::string_view status) {
  status = Trim(status);
  auto blank = [&](size_t i) { return status[i] == ' ' || status[i] == '\t'; };
  size_t words = 0, last = 0;
  for (size_t i = 0; i < status.size();) {
    while (i < status.size() && blank(i)) ++i;
    if (i == status.size()) break;
    ++words;
    last = i;
    while (i < status.size() && !blank(i)) ++i;
  }
  return words == 3 ? status.substr(last) : std::string_view();
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// linux-image-K (not a meta such as linux-image-generic: K starts with a digit), installed or not, into the
// list of installed kernel releases; the kernels step validates each before it names a path.
void NoteKernelImage(const DpkgEntry& e, bool journal, std::vector<std::string>& images) {
  std::string k = e.package.substr(12);
  if (StartsWith(k, "unsigned-")) k = k.substr(9);
  if (k.empty() || k[0] < '0' || k[0] > '9') return;
  auto it = std::find(images.begin(), images.end(), k);
  if (DpkgInstalled(e.status)) {
    if (it == images.end()) images.push_back(k);
  } else if (journal && it != images.end()) {
    images.erase(it);
  }
}

constexpr size_t kMaxKernelMetas = 64;  // a host has a few; a hostile status file could list thousands

// An unversioned linux-image-M or linux-headers-M (a meta such as linux-image-generic-hwe-22.04 or
// linux-headers-aws: M does not start with a digit), installed, into the list of installed kernel metas; a
// journal record that is not installed drops it. Which of them are flavour metas is apt's to say.
void NoteKernelMeta(const DpkgEntry& e, bool journal, std::vector<std::string>& metas) {
  const size_t prefix = StartsWith(e.package, "linux-image-") ? 12 : 14;
  if (e.package.size() <= prefix || (e.package[prefix] >= '0' && e.package[prefix] <= '9')) return;
  auto it = std::find(metas.begin(), metas.end(), e.package);
  if (DpkgInstalled(e.status)) {
    if (it == metas.end() && metas.size() < kMaxKernelMetas) metas.push_back(e.package);
  } else if (journal && it != metas.end()) {
    metas.erase(it);
  }
}

}  // namespace

namespace {

// dpkg's stanzas, a line at a time, from pieces of a file handed over in order (a line may span two pieces):
// only Package, Status and Version are kept, and a blank line ends a stanza. A line split between pieces
// is kept whole only when it may be a kept field or blank; any other is remembered as one character that
// is neither, so a long description line costs nothing to carry.
class StanzaScanner {
 public:
  void Feed(std::string_view piece) {
    size_t pos = 0;
    while (pos < piece.size()) {
      const size_t nl = piece.find('\n', pos);
      if (nl == std::string_view::npos) {
        Carry(piece.substr(pos));
        return;
      }
      if (carried_.empty()) {
        Line(piece.substr(pos, nl - pos));
      } else {
        Carry(piece.substr(pos, nl - pos));
        Line(carried_);
        carried_.clear();
      }
      pos = nl + 1;
    }
  }
  std::vector<DpkgEntry> Finish() {
    Line(carried_);  // the text after the last newline, if any
    carried_.clear();
    Flush();
    return std::move(out_);
  }

 private:
  static bool MayMatter(char c) { return c == 'P' || c == 'S' || c == 'V' || c == '\r'; }
  void Carry(std::string_view part) {
    if (carried_.empty() && !part.empty() && !MayMatter(part[0]))
      carried_ = "-";
    else if (carried_ != "-")
      carried_.append(part);
  }
  void Flush() {
    if (!cur_.package.empty()) out_.push_back(std::move(cur_));
    cur_ = DpkgEntry{};
  }
  // Most lines are other fields or continuations: the first letter rules them out.
  void Line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      Flush();
    } else if (line[0] == 'P' && StartsWith(line, "Package:")) {
      cur_.package = std::string(Trim(line.substr(8)));
    } else if (line[0] == 'S' && StartsWith(line, "Status:")) {
      cur_.status = std::string(Trim(line.substr(7)));
    } else if (line[0] == 'V' && StartsWith(line, "Version:")) {
      cur_.version = std::string(Trim(line.substr(8)));
    }
  }
  std::string carried_;
  DpkgEntry cur_;
  std::vector<DpkgEntry> out_;
};

// A status or journal file's stanzas, read a piece at a time; nullopt where the file cannot be read.
std::optional<std::vector<DpkgEntry>> ScanDpkgFile(const sys::Fs& fs, const std::string& path) {
  StanzaScanner scan;
  if (!fs.ReadPieces(path, [&scan](std::string_view piece) { scan.Feed(piece); })) return std::nullopt;
  return scan.Finish();
}

}  // namespace

std::vector<DpkgEntry> ParseDpkgStatus(std::string_view text) {
  StanzaScanner scan;
  scan.Feed(text);
  return scan.Finish();
}

bool IsNvidiaRelatedPackage(std::string_view n) {
  for (std::string_view p :
       {"nvidia-", "libnvidia-", "cuda-", "libcudnn", "cudnn", "libnccl", "docker", "containerd"}) {
    if (StartsWith(n, p)) return true;
  }
  return n == "cuda" || n == "nvlsm";
}

bool DpkgInstalled(std::string_view status) {
  auto s = StateWord(status);
  return !s.empty() && s != "not-installed" && s != "config-files";
}

bool DpkgInterrupted(std::string_view status) {
  auto s = StateWord(status);
  return s == "half-configured" || s == "half-installed" || s == "unpacked" || s == "triggers-awaited" ||
         s == "triggers-pending";
}

DpkgDatabase ReadDpkgDatabase(const sys::Fs& fs) {
  DpkgDatabase db;
  const std::string status_path = "/var/lib/dpkg/status";
  if (auto entries = ScanDpkgFile(fs, status_path)) {
    db.status_found = true;
    db.entries = std::move(*entries);
  } else if (fs.Exists(status_path)) {
    throw Error(kExitFailed, sys::WhyUnreadable(fs, status_path, status_path) +
                                 "; the installed packages cannot be judged");
  }
  db.journal_from = db.entries.size();
  std::vector<std::string> names;
  for (auto& name : fs.List("/var/lib/dpkg/updates"))
    if (AllDigits(name)) names.push_back(std::move(name));
  // dpkg applies its journal in numeric order (0001 before 0010).
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const auto& name : names) {
    const std::string path = "/var/lib/dpkg/updates/" + name;
    db.journal_files.push_back(path);
    auto scanned = ScanDpkgFile(fs, path);
    if (!scanned && fs.Exists(path))
      throw Error(kExitFailed,
                  sys::WhyUnreadable(fs, path, path) + "; the installed packages cannot be judged");
    std::vector<DpkgEntry> records = scanned ? std::move(*scanned) : std::vector<DpkgEntry>();
    if (records.empty()) db.empty_journal.push_back(path);
    db.entries.insert(db.entries.end(), std::make_move_iterator(records.begin()),
                      std::make_move_iterator(records.end()));
  }
  return db;
}

void ProbeDpkg(const ProbeEnv& env, HostFacts& facts) {
  const DpkgDatabase db = ReadDpkgDatabase(*env.fs);
  if (!db.status_found) {
    facts.probe_notes.push_back("dpkg: /var/lib/dpkg/status not found (not a Debian/Ubuntu host?)");
    return;
  }
  auto interrupted = [&](const std::string& what) {
    if (std::find(facts.dpkg_interrupted.begin(), facts.dpkg_interrupted.end(), what) ==
        facts.dpkg_interrupted.end())
      facts.dpkg_interrupted.push_back(what);
  };
  // `journal`: a record from updates/, newer than status, so a removal there drops the package. In the
  // status file itself a not-installed stanza may be another architecture's (libfoo:i386) and is skipped.
  // Every journal record names a package dpkg did not finish with.
  for (size_t i = 0; i < db.entries.size(); ++i) {
    const DpkgEntry& e = db.entries[i];
    const bool journal = db.from_journal(i);
    if (journal || DpkgInterrupted(e.status)) interrupted(e.package);
    if (StartsWith(e.package, "linux-image-")) NoteKernelImage(e, journal, facts.kernel_images);
    if (StartsWith(e.package, "linux-image-") || StartsWith(e.package, "linux-headers-"))
      NoteKernelMeta(e, journal, facts.kernel_metas);
    if (!IsNvidiaRelatedPackage(e.package)) continue;
    if (!DpkgInstalled(e.status)) {
      if (journal) facts.packages.erase(e.package);
      continue;
    }
    InstalledPackage p;
    p.name = e.package;
    p.version = e.version;
    p.status = e.status;
    p.held = StartsWith(e.status, "hold ");
    facts.packages[p.name] = p;
  }
  // A journal file with no record: an interrupted write.
  for (const auto& path : db.empty_journal) facts.dpkg_interrupted.push_back(path);
}

}  // namespace gp::probe
