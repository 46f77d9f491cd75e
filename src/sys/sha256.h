// SHA-256 through OpenSSL's libcrypto (EVP, loaded with dlopen on first use), for pinned downloads.
#pragma once
#include <string>
#include <string_view>

namespace gp::sys {

// Lower-case hex digest of `data` (64 characters).
std::string Sha256Hex(std::string_view data);

// The same digest over data that arrives in pieces (a download hashed as it streams). Throws
// std::runtime_error when libcrypto cannot be loaded (on construction) or fails.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t len);
  std::string FinalHex();  // once; the object is spent afterwards

 private:
  void* ctx_ = nullptr;  // EVP_MD_CTX*
};

}  // namespace gp::sys
