// SHA-256 through OpenSSL's libcrypto (EVP, loaded with dlopen on first use), for pinned downloads.
#pragma once
#include <string>
#include <string_view>

namespace gp::sys {

// Lower-case hex digest of `data` (64 characters).
std::string Sha256Hex(std::string_view data);

}  // namespace gp::sys
