// The streaming install of NVIDIA redistributable archives (Request, redist/request.h), in one pass:
//   1. the redistrib JSON (checked against json_sha256 when pinned) names each archive's path, size, sha256;
//   2. each archive is downloaded with libcurl (TLS verified; a dropped transfer resumed with a Range
//      request, up to `attempts` tries with doubling backoff), hashed and extracted by libarchive as the
//      bytes arrive, into a hidden staging directory beside the prefix (mode 0700 until it is complete);
//      every entry passes redist/paths.h, and the extraction stays within UnpackLimitFor (file data at most
//      kUnpackRatio times the archive's size and the free space less kKeepFree, at most kMaxEntries entries),
//      stopping before the first byte over: a decompression bomb writes no more than that before it is
//      refused;
//   3. only when every archive's size and sha256 match is the staging directory synced (its files' writeback
//      started while decoding) and renamed to the versioned prefix (the same version again: exchanged with
//      the old tree in one rename), `current` switched to it by a symlink rename, the ld.so.conf.d entry
//      written. Every other version of the layer stays side by side; removing one is the owner's choice.
// A corrupt, truncated, tampered or hostile archive leaves nothing visible: the staging directory is
// removed (at any depth; a removal that fails is added to the error), the prefix never appears, `current`
// keeps pointing at the previous version (which stays).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "redist/request.h"
#include "sys/fs.h"
#include "sys/http.h"

namespace gp::redist {

// The bounds on what an archive may unpack to. NVIDIA's redistrib JSON gives only an archive's size and
// digests, not what it unpacks to, and the digest is known only after the last byte: these hold while the
// bytes are still unverified. The most compressible of NVIDIA's archives are headers: CUDA 13.0's CCCL
// headers (1,691 files, 15,011,840 bytes as a tar) pack with `xz -6` to 965,516 bytes (15.5:1) and with `xz
// -9e` to 924,868 (16.2:1); cuDNN's libraries to about 1.6:1. 32 leaves twice the headroom of the headers.
inline constexpr uint64_t kUnpackRatio = 32;
inline constexpr uint64_t kKeepFree = 1ull << 30;  // left free on the prefix's filesystem
inline constexpr uint64_t kMaxEntries = 100000;    // per archive (CCCL's headers: about 2,000)

struct UnpackLimit {
  uint64_t bytes = 0;     // file data one archive may unpack to
  bool by_space = false;  // the free space, not the ratio, set it
};
// min(kUnpackRatio x archive_size, free - kKeepFree); only the ratio when the free space is unknown.
UnpackLimit UnpackLimitFor(uint64_t archive_size, std::optional<uint64_t> free_bytes);

struct InstallOptions {
  std::string ca_file;                                   // tests: trust this CA instead of the system's
  int attempts = 5;                                      // per archive, resumes included
  std::chrono::milliseconds backoff{1000};               // before the 2nd try; doubles after each
  std::function<void(std::chrono::milliseconds)> sleep;  // default: std::this_thread::sleep_for
  std::function<void(const std::string&)> progress;      // one line per archive; may be empty
  // Download progress of one archive (its file name, bytes so far, its size), called from the download thread
  // each time the whole percentage changes; may be empty.
  std::function<void(const std::string& name, uint64_t done, uint64_t total)> bytes;
  // The most a small file (the redistrib JSON, FetchSmall) may take, all tries together.
  std::chrono::milliseconds fetch_deadline{60000};
};

struct InstallResult {
  std::string error;      // "" on success; one line
  std::string prefix;     // the installed prefix
  std::string previous;   // what `current` pointed at before ("" when nothing); kept
  uint64_t bytes = 0;     // archive bytes downloaded
  uint64_t unpacked = 0;  // file data written into staging, refused archives included
  int resumes = 0;        // transfers resumed after a drop
  bool ok() const { return error.empty(); }
};

InstallResult Install(const Request& req, sys::Fs& fs, sys::HttpClient& http, const InstallOptions& opt = {});

// Downloads a whole small file (the redistrib JSON) through the same streamed path, at most `max_bytes`.
// "" and `error` set on failure.
std::string FetchSmall(sys::HttpClient& http, const std::string& url, const InstallOptions& opt,
                       size_t max_bytes, std::string& error);

}  // namespace gp::redist
