// libcurl's own reading of a URL (its URL API, curl_url_set), loaded with dlopen on first use like the HTTP
// client. gpuprep decides on URLs with util/input.h's ParseUrl; this is the reference it is tested against
// (tests/differential), so that a URL gpuprep accepts is read by libcurl as the same scheme, host and port.
#pragma once
#include <optional>
#include <string>

namespace gp::sys {

struct CurlUrl {
  bool ok = false;
  std::string error;                     // curl's message when it refuses the URL ("Bad IPv6 address")
  std::string scheme, host, port, path;  // as curl_url_get gives them; port "" when the URL has none
  std::string query;                     // without its '?'; "" when none
};

// The URL parsed with the flags libcurl's easy interface uses for CURLOPT_URL (CURLU_GUESS_SCHEME |
// CURLU_NON_SUPPORT_SCHEME). nullopt when libcurl.so.4 or its URL API (curl 7.62+) cannot be loaded.
std::optional<CurlUrl> CurlReadUrl(const std::string& url);

}  // namespace gp::sys
