#include "apply/keys.h"

#include "apt/keyring.h"
#include "sys/sha256.h"
#include "util/strings.h"

namespace gp::apply {

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
  if (!fingerprint.empty()) {
    const std::string tmp = "/var/lib/gpuprep/tmp/key.download";
    auto w = fs.WriteAtomic(tmp, res.body, 0600, false);
    if (!w.ok) return {"", w.error};
    fs.MakeDirs("/var/lib/gpuprep/gnupg", 0700);
    sys::Command cmd;
    cmd.argv = {"gpg", "--batch", "--show-keys", "--with-colons", fs.HostPath(tmp)};
    cmd.env = {{"GNUPGHOME", fs.HostPath("/var/lib/gpuprep/gnupg")}};
    auto out = runner.Run(cmd);
    fs.Remove(tmp);
    if (!out.ok())
      return {"", "gpg --show-keys could not read the key from " + url + ": " + LastLine(out.err)};
    auto fprs = apt::PrimaryFingerprints(out.out);
    bool found = false;
    for (const auto& f : fprs) found = found || f == apt::NormalizeFingerprint(fingerprint);
    if (!found)
      return {"", url + ": key fingerprint mismatch: the key is " +
                      (fprs.empty() ? "unreadable" : Join(fprs, ", ")) + ", the stack pins " + fingerprint +
                      "; nothing was written"};
  }
  std::string key = res.body;
  if (apt::IsArmored(key)) {
    auto bin = apt::Dearmor(key);
    if (!bin) return {"", url + ": malformed ASCII-armored key"};
    key = *bin;
  }
  return {key, ""};
}

}  // namespace gp::apply
