#include "apply/keys.h"

#include "apt/keyring.h"
#include "sys/sha256.h"
#include "sys/tree.h"
#include "util/strings.h"

namespace gp::apply {
namespace {

constexpr char kTmpDir[] = "/var/lib/gpuprep/tmp";

// A GnuPG home of its own for one check, removed with everything in it when this goes out of scope. gpg runs
// there with --no-autostart: reading and exporting public keys needs no agent, so none is left running.
class ScratchHome {
 public:
  ScratchHome(sys::Fs& fs, sys::CommandRunner& runner) : runner_(runner) {
    fs.MakeDirs(kTmpDir, 0700);
    path_ = sys::MakeTempDir(fs.HostPath(kTmpDir), "gnupg", error_, 0700);
  }
  ~ScratchHome() {
    if (!path_.empty()) sys::RemoveTree(path_);
  }
  ScratchHome(const ScratchHome&) = delete;
  ScratchHome& operator=(const ScratchHome&) = delete;
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }

  // gpg in this home, never starting an agent, its chatter captured (not printed).
  sys::CommandResult Gpg(std::vector<std::string> args, std::optional<std::string> in = std::nullopt) {
    sys::Command cmd;
    cmd.argv = {"gpg", "--batch", "--quiet", "--no-autostart"};
    cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
    cmd.env = {{"GNUPGHOME", path_}};
    cmd.stdin_data = std::move(in);
    return runner_.Run(cmd);
  }

 private:
  sys::CommandRunner& runner_;
  std::string path_, error_;
};

// The primary fingerprints gpg reads in `key`; nullopt (with `why`) when it cannot read it.
std::optional<std::vector<std::string>> PrimariesOf(ScratchHome& home, const std::string& key,
                                                    std::string& why) {
  auto out = home.Gpg({"--show-keys", "--with-colons"}, key);
  if (!out.ok()) {
    why = out.not_found ? "gpg is not installed" : LastLine(out.err);
    return std::nullopt;
  }
  return apt::PrimaryFingerprints(out.out);
}

// `body` reduced to the key pinned by `fingerprint`: the file is imported into a GnuPG home of its own and
// that primary key alone exported (with its subkeys, as gpg keeps them: bound by the key's own signatures).
// Any other key in the file never reaches apt's keyring.
KeyDownload PinnedKeyOnly(const std::string& url, const std::string& body, const std::string& fingerprint,
                          sys::Fs& fs, sys::CommandRunner& runner) {
  const std::string pinned = apt::NormalizeFingerprint(fingerprint);
  ScratchHome home(fs, runner);
  if (home.path().empty()) return {"", home.error()};
  std::string why;
  auto primaries = PrimariesOf(home, body, why);
  if (!primaries) return {"", "gpg --show-keys could not read the key from " + url + ": " + why};
  bool found = false;
  for (const auto& f : *primaries) found = found || f == pinned;
  if (!found)
    return {"", url + ": key fingerprint mismatch: the key is " +
                    (primaries->empty() ? "unreadable" : Join(*primaries, ", ")) + ", the stack pins " +
                    fingerprint + "; nothing was written"};
  // gpg --import exits non-zero when any key of the file is refused; what counts is what it exports.
  auto imported = home.Gpg({"--import"}, body);
  auto exported = home.Gpg({"--export", pinned});
  if (!exported.ok() || exported.out.empty())
    return {"", url + ": gpg could not import the pinned key " + fingerprint + ": " +
                    LastLine(imported.err.empty() ? exported.err : imported.err) + "; nothing was written"};
  auto kept = PrimariesOf(home, exported.out, why);
  if (!kept || *kept != std::vector<std::string>{pinned})
    return {"", url + ": gpg exported more or other than the pinned key " + fingerprint +
                    "; nothing was written"};
  return {exported.out, ""};
}

}  // namespace

KeyDownload DownloadKey(const std::string& url, const std::string& sha256, const std::string& fingerprint,
                        sys::Fs& fs, sys::CommandRunner& runner, sys::HttpClient& http) {
  auto res = http.Get(url, std::chrono::seconds(60));
  if (!res.ok())
    return {"", "cannot download " + url + ": " +
                    (res.error.empty() ? "HTTP " + std::to_string(res.status) : res.error)};
  if (!sha256.empty()) {
    const std::string got = sys::Sha256Hex(res.body);
    if (got != sha256)
      return {"", url + ": sha256 mismatch: downloaded " + got + ", the stack pins " + sha256 +
                      "; nothing was written"};
  }
  if (!fingerprint.empty()) return PinnedKeyOnly(url, res.body, fingerprint, fs, runner);
  // Pinned by the file's sha256 alone: every byte of it is what the stack trusts.
  std::string key = res.body;
  if (apt::IsArmored(key)) {
    auto bin = apt::Dearmor(key);
    if (!bin) return {"", url + ": malformed ASCII-armored key"};
    key = *bin;
  }
  return {key, ""};
}

}  // namespace gp::apply
