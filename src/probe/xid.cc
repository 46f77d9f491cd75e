// The Xid history of the boot (probe/xid.h): on the live host the kernel's ring buffer through /dev/kmsg,
// read non-blocking and bounded; under --root the text logs in the tree (kern.log, else syslog, each with its
// first rotation when the newest file does not reach back to the boot), never the live host's ring buffer
// and never the binary journal.
#include "probe/xid.h"

#include <chrono>

#include "probe/steps.h"
#include "sys/kernel_log.h"
#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr size_t kMaxKmsgBytes = 32u << 20;  // the ring buffer is at most a few MiB (log_buf_len)
constexpr int kMaxKmsgMs = 3000;
constexpr size_t kMaxTextLogBytes = 32u << 20;  // per file, its newest part

void ReadLiveRing(const ProbeEnv& env, XidLog& log) {
  const sys::LogRead r = sys::ReadKmsg("/dev/kmsg", kMaxKmsgBytes, kMaxKmsgMs);
  if (!r.ok) {
    log.skip_reason = r.error;
    auto restrict = env.fs->ReadPrefix("/proc/sys/kernel/dmesg_restrict", 8);
    if (restrict && Trim(*restrict) == "1")
      log.skip_reason += " (kernel.dmesg_restrict=1 keeps the kernel log from users other than root)";
    return;
  }
  log.read = true;
  log.sources.push_back("/dev/kmsg");
  ScanKmsg(r.data, log);
  if (r.truncated)
    log.notes.push_back("/dev/kmsg: stopped at the read bound; the newest records were not read");
}

// The files of one log family that exist, oldest first: NAME.1 then NAME, or NAME alone when it reaches back
// to the boot. Compressed rotations are left out with a note.
void ReadTextFamily(const ProbeEnv& env, const std::string& name, XidLog& log) {
  const sys::Fs& fs = *env.fs;
  std::string newest, older;
  bool newest_cut = false;
  auto read = [&](const std::string& path, std::string& into, bool& cut) {
    if (!fs.Exists(path)) return false;
    const sys::LogRead r = sys::ReadTail(fs.HostPath(path), kMaxTextLogBytes);
    if (!r.ok) {
      log.notes.push_back(path + ": " + r.error);
      return false;
    }
    into = r.data;
    cut = r.truncated;
    log.sources.push_back(path);
    return true;
  };
  const bool have_newest = read(name, newest, newest_cut);
  XidLog probe_newest;
  ScanKernLog(newest, probe_newest);
  bool older_cut = false;
  if (!probe_newest.from_boot && !newest_cut) read(name + ".1", older, older_cut);
  if (!have_newest && older.empty()) return;
  if (fs.Exists(name + ".2.gz") && !probe_newest.from_boot)
    log.notes.push_back(name + ".2.gz and older rotations are compressed and were not read");
  log.read = true;
  ScanKernLog(older + newest, log);
}

void ReadRootLogs(const ProbeEnv& env, XidLog& log) {
  for (const char* name : {"/var/log/kern.log", "/var/log/syslog"}) {
    ReadTextFamily(env, name, log);
    if (log.read) break;
  }
  if (env.fs->IsDir("/var/log/journal") || env.fs->IsDir("/run/log/journal"))
    log.notes.push_back("binary journal not read under --root");
  if (!log.read) {
    log.skip_reason = "no kernel text log under the tree (/var/log/kern.log, /var/log/syslog)";
    if (!log.notes.empty()) log.skip_reason += "; " + Join(log.notes, "; ");
  }
}

}  // namespace

void ProbeXid(const ProbeEnv& env, HostFacts& facts) {
  if (facts.gpus.empty()) return;  // nothing to map an event to
  if (Live(env))
    ReadLiveRing(env, facts.xid);
  else
    ReadRootLogs(env, facts.xid);
}

namespace {

constexpr size_t kMaxJournalBytes = 64u << 20;
constexpr std::chrono::seconds kJournalTimeout{20};
// This boot's journal (doctor --health) within node-problem-detector's 5 s for the whole run.
constexpr std::chrono::seconds kBootJournalTimeout{2};

}  // namespace

void ProbeXidJournal(const ProbeEnv& env, const std::string& since, HostFacts& facts) {
  XidLog& log = facts.xid;
  if (!env.runner || !Live(env)) {
    log.notes.push_back("binary journal not read under --root");
    return;
  }
  const bool boot = since.empty();
  sys::Command cmd;
  cmd.argv = {"journalctl", "-k", "-o", "export", "--no-pager", boot ? "-b" : "--since=" + since};
  const std::chrono::seconds timeout = boot ? kBootJournalTimeout : kJournalTimeout;
  cmd.timeout = timeout;
  cmd.max_output = kMaxJournalBytes;
  const sys::CommandResult r = env.runner->Run(cmd);
  const std::string what = boot ? "journalctl -k -b" : "journalctl -k --since=" + since;
  if (!r.truncated && (r.not_found || r.exit_code != 0 || r.timed_out)) {
    const std::string err(Trim(std::string_view(r.err).substr(0, r.err.find('\n'))));
    const std::string why =
        TerminalSafe(what + ": " +
                     (r.not_found   ? std::string("not found")
                      : r.timed_out ? "no answer within " + std::to_string(timeout.count()) + " s"
                                    : "exit " + std::to_string(r.exit_code)) +
                     (err.empty() ? "" : " (" + err.substr(0, 200) + ")"));
    log.notes.push_back(why);
    if (!log.read) log.skip_reason += (log.skip_reason.empty() ? "" : "; ") + why;
    return;
  }
  XidLog journal;
  journal.read = true;
  journal.sources = {what};
  ScanJournalExport(r.out, journal, !boot);
  if (r.truncated)
    journal.notes.push_back(what + ": stopped at the read bound; the newest entries were not read");
  if (boot && !journal.from_boot && log.read && log.from_boot) return;  // the ring reaches further back
  if (!boot && journal.oldest.empty() && journal.events.empty())
    journal.oldest = since;  // nothing since then
  log = std::move(journal);
}

}  // namespace gp::probe
