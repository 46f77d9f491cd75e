#include "sys/curl_url.h"

#include <curl/curl.h>

#include "sys/dl.h"

namespace gp::sys {
namespace {

struct UrlApi {
  void* handle = nullptr;
  std::string error;
  CURLU* (*url)() = nullptr;
  void (*cleanup)(CURLU*) = nullptr;
  CURLUcode (*set)(CURLU*, CURLUPart, const char*, unsigned int) = nullptr;
  CURLUcode (*get)(CURLU*, CURLUPart, char**, unsigned int) = nullptr;
  void (*free)(void*) = nullptr;
  const char* (*strerror)(CURLUcode) = nullptr;  // curl 7.80+; the code's number without it
};

bool BindUrlLib(void* lib, UrlApi& api) {
  DlBind(lib, "curl_url_strerror", api.strerror);  // optional
  return DlBind(lib, "curl_url", api.url) && DlBind(lib, "curl_url_cleanup", api.cleanup) &&
         DlBind(lib, "curl_url_set", api.set) && DlBind(lib, "curl_url_get", api.get) &&
         DlBind(lib, "curl_free", api.free);
}

const UrlApi& UrlLib() { return DlLoadOnce(kLibcurlSoname, "curl_url_* symbols", BindUrlLib); }

// One part, or "" when the URL has none.
std::string Part(const UrlApi& api, CURLU* u, CURLUPart part) {
  char* text = nullptr;
  if (api.get(u, part, &text, 0) != CURLUE_OK || !text) return "";
  std::string out = text;
  api.free(text);
  return out;
}

}  // namespace

std::optional<CurlUrl> CurlReadUrl(const std::string& url) {
  const UrlApi& api = UrlLib();
  if (!api.handle) return std::nullopt;
  CURLU* u = api.url();
  if (!u) return std::nullopt;
  CurlUrl r;
  const CURLUcode rc = api.set(u, CURLUPART_URL, url.c_str(), CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME);
  if (rc != CURLUE_OK) {
    r.error = api.strerror ? api.strerror(rc) : "CURLUcode " + std::to_string(static_cast<int>(rc));
  } else {
    r.ok = true;
    r.scheme = Part(api, u, CURLUPART_SCHEME);
    r.host = Part(api, u, CURLUPART_HOST);
    r.port = Part(api, u, CURLUPART_PORT);
    r.path = Part(api, u, CURLUPART_PATH);
    r.query = Part(api, u, CURLUPART_QUERY);
  }
  api.cleanup(u);
  return r;
}

}  // namespace gp::sys
