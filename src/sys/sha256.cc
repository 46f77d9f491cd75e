// libcrypto is loaded with dlopen("libcrypto.so.3") on first use, like libcurl (sys/http_curl.cc): only
// the commands that verify a download map it, not every process start (~0.5-0.9 ms). <openssl/evp.h> is
// included for types and constants only; nothing links against libcrypto.
#include "sys/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "sys/dl.h"

namespace gp::sys {
namespace {

struct CryptoApi {
  void* handle = nullptr;
  std::string error;
  decltype(&EVP_MD_CTX_new) md_ctx_new = nullptr;
  decltype(&EVP_MD_CTX_free) md_ctx_free = nullptr;
  decltype(&EVP_sha256) sha256 = nullptr;
  decltype(&EVP_DigestInit_ex) digest_init = nullptr;
  decltype(&EVP_DigestUpdate) digest_update = nullptr;
  decltype(&EVP_DigestFinal_ex) digest_final = nullptr;
};

bool BindCryptoLib(void* lib, CryptoApi& api) {
  return DlBind(lib, "EVP_MD_CTX_new", api.md_ctx_new) && DlBind(lib, "EVP_MD_CTX_free", api.md_ctx_free) &&
         DlBind(lib, "EVP_sha256", api.sha256) && DlBind(lib, "EVP_DigestInit_ex", api.digest_init) &&
         DlBind(lib, "EVP_DigestUpdate", api.digest_update) &&
         DlBind(lib, "EVP_DigestFinal_ex", api.digest_final);
}

const CryptoApi& CryptoLib() { return DlLoadOnce(kLibcryptoSoname, "EVP_* symbols", BindCryptoLib); }

std::string Hex(const unsigned char* digest, unsigned int len) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

}  // namespace

Sha256::Sha256() {
  const CryptoApi& api = CryptoLib();
  if (!api.handle) throw std::runtime_error("sha256: " + api.error);
  EVP_MD_CTX* ctx = api.md_ctx_new();
  if (!ctx || api.digest_init(ctx, api.sha256(), nullptr) != 1) {
    if (ctx) api.md_ctx_free(ctx);
    throw std::runtime_error("sha256: libcrypto failed");
  }
  ctx_ = ctx;
}

Sha256::~Sha256() {
  if (ctx_) CryptoLib().md_ctx_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::Update(const void* data, size_t len) {
  if (!ctx_ || CryptoLib().digest_update(static_cast<EVP_MD_CTX*>(ctx_), data, len) != 1)
    throw std::runtime_error("sha256: libcrypto failed");
}

std::string Sha256::FinalHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx_ || CryptoLib().digest_final(static_cast<EVP_MD_CTX*>(ctx_), digest, &len) != 1)
    throw std::runtime_error("sha256: libcrypto failed");
  CryptoLib().md_ctx_free(static_cast<EVP_MD_CTX*>(ctx_));
  ctx_ = nullptr;
  return Hex(digest, len);
}

std::string Sha256Hex(std::string_view data) {
  const CryptoApi& api = CryptoLib();
  if (!api.handle) throw std::runtime_error("sha256: " + api.error);
  std::unique_ptr<EVP_MD_CTX, decltype(api.md_ctx_free)> ctx(api.md_ctx_new(), api.md_ctx_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx || api.digest_init(ctx.get(), api.sha256(), nullptr) != 1 ||
      api.digest_update(ctx.get(), data.data(), data.size()) != 1 ||
      api.digest_final(ctx.get(), digest, &len) != 1)
    throw std::runtime_error("sha256: libcrypto failed");
  return Hex(digest, len);
}

}  // namespace gp::sys
