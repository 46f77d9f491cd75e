// The streaming install of NVIDIA redistributable archives (Request, redist/request.h), in one pass:
//   1. the redistrib JSON (checked against json_sha256 when pinned) names each archive's path, size, sha256;
//   2. each archive is downloaded with libcurl (TLS verified; a dropped transfer resumed with a Range
//      request, up to `attempts` tries with doubling backoff), hashed and extracted by libarchive as the
//      bytes arrive, into a hidden staging directory beside the prefix; every entry passes redist/paths.h;
//   3. only when every archive's size and sha256 match is the staging directory synced (its files' writeback
//      started while decoding) and renamed to the versioned prefix (the same version again: exchanged with
//      the old tree in one rename), `current` switched to it by a symlink rename, the ld.so.conf.d entry
//      written. The version `current` pointed at before is kept; older versioned prefixes of the layer go.
// A corrupt, truncated, tampered or hostile archive leaves nothing visible: the staging directory is
// removed, the prefix never appears, `current` keeps pointing at the previous version (which stays).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "redist/request.h"
#include "sys/fs.h"
#include "sys/http.h"

namespace gp::redist {

struct InstallOptions {
  std::string ca_file;                                    // tests: trust this CA instead of the system's
  int attempts = 5;                                       // per archive, resumes included
  std::chrono::milliseconds backoff{1000};                // before the 2nd try; doubles after each
  std::function<void(std::chrono::milliseconds)> sleep;   // default: std::this_thread::sleep_for
  std::function<void(const std::string&)> progress;       // one line per archive; may be empty
  // Download progress of one archive (its file name, bytes so far, its size), called from the download thread
  // each time the whole percentage changes; may be empty.
  std::function<void(const std::string& name, uint64_t done, uint64_t total)> bytes;
};

struct InstallResult {
  std::string error;      // "" on success; one line
  std::string prefix;     // the installed prefix
  std::string previous;   // what `current` pointed at before ("" when nothing); kept
  uint64_t bytes = 0;     // archive bytes downloaded
  int resumes = 0;        // transfers resumed after a drop
  bool ok() const { return error.empty(); }
};

InstallResult Install(const Request& req, sys::Fs& fs, sys::HttpClient& http, const InstallOptions& opt = {});

// Downloads a whole small file (the redistrib JSON) through the same streamed path, at most `max_bytes`.
// "" and `error` set on failure.
std::string FetchSmall(sys::HttpClient& http, const std::string& url, const InstallOptions& opt, size_t max_bytes,
                       std::string& error);

}  // namespace gp::redist
