// Repository signing keys: ASCII armor removed in-process (apt's signed-by wants a binary keyring for
// *.gpg paths), fingerprints read from `gpg --show-keys --with-colons` output.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gp::apt {

// True when `data` is an ASCII-armored OpenPGP block ("-----BEGIN PGP PUBLIC KEY BLOCK-----").
bool IsArmored(const std::string& data);

// The binary packets of an armored block; nullopt when the armor or its base64 is malformed.
std::optional<std::string> Dearmor(const std::string& armored);

// "EB69 3B30 35cd..." -> "EB693B3035CD..." (blanks dropped, upper case).
std::string NormalizeFingerprint(const std::string& fpr);

// The fingerprints of the primary keys in `gpg --with-colons` output: the first "fpr" record after
// each "pub" record.
std::vector<std::string> PrimaryFingerprints(const std::string& colons);

}  // namespace gp::apt
