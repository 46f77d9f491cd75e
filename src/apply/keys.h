// A repository signing key, downloaded and checked against the stack's pin (the sha256 of the file, or the
// fingerprint of its primary key as gpg reads it) before anything is written where apt would trust it.
#pragma once
#include <string>

#include "sys/fs.h"
#include "sys/http.h"
#include "sys/process.h"

namespace gp::apply {

struct KeyDownload {
  std::string key;    // the key as apt's signed-by wants it (binary; ASCII armor removed)
  std::string error;  // one line; "" on success
  bool ok() const { return error.empty(); }
};

// Downloads `url`, checks `sha256` (lower-case hex of the downloaded bytes) and/or `fingerprint` (upper-case
// hex, no blanks; gpg runs with a private GNUPGHOME under /var/lib/gpuprep) and removes ASCII armor.
KeyDownload DownloadKey(const std::string& url, const std::string& sha256, const std::string& fingerprint,
                        sys::Fs& fs, sys::CommandRunner& runner, sys::HttpClient& http);

}  // namespace gp::apply
