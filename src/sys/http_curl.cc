// HttpClient over libcurl, loaded with dlopen("libcurl.so.4") on first use: commands that never download
// never map libcurl and its dependencies. curl.h is included for types and constants only.
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "sys/dl.h"
#include "sys/http.h"
#include "util/input.h"

namespace gp::sys {
namespace {

constexpr size_t kMaxDownloadBody = 256u << 20;  // a download larger than this is refused, not buffered

struct CurlApi {
  void* handle = nullptr;
  std::string error;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

bool BindCurlLib(void* lib, CurlApi& api) {
  return DlBind(lib, "curl_easy_init", api.easy_init) && DlBind(lib, "curl_easy_setopt", api.easy_setopt) &&
         DlBind(lib, "curl_easy_perform", api.easy_perform) &&
         DlBind(lib, "curl_easy_getinfo", api.easy_getinfo) &&
         DlBind(lib, "curl_easy_cleanup", api.easy_cleanup) &&
         DlBind(lib, "curl_easy_strerror", api.easy_strerror) &&
         DlBind(lib, "curl_slist_append", api.slist_append) &&
         DlBind(lib, "curl_slist_free_all", api.slist_free_all);
}

const CurlApi& CurlLib() { return DlLoadOnce(kLibcurlSoname, "curl_easy_* symbols", BindCurlLib); }

constexpr size_t kMaxHeaderBytes = 64u << 10;  // one response's headers

struct Sink {
  std::string body;
  size_t max_body = kMaxDownloadBody;
  bool too_big = false;
  std::vector<std::pair<std::string, std::string>> headers;
  size_t header_bytes = 0;
  bool headers_too_big = false;
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t len = size * n;
  if (sink->body.size() + len > sink->max_body) {
    sink->too_big = true;
    return 0;  // aborts the transfer
  }
  sink->body.append(data, len);
  return len;
}

// One header line per call, the status line included: a status line starts the next response's headers
// (a redirect's are dropped), "Name: value" lines are kept with the name lower-cased.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t len = size * n;
  std::string line(data, len);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.compare(0, 5, "HTTP/") == 0) {
    sink->headers.clear();
    sink->header_bytes = 0;
    return len;
  }
  sink->header_bytes += len;
  if (sink->header_bytes > kMaxHeaderBytes) {
    sink->headers_too_big = true;
    return 0;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) return len;  // the blank line, or a folded continuation
  std::string name = line.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t b = colon + 1;
  while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
  size_t e = line.size();
  while (e > b && (line[e - 1] == ' ' || line[e - 1] == '\t')) --e;
  sink->headers.emplace_back(std::move(name), line.substr(b, e - b));
  return len;
}

// Loopback addresses as libcurl reports the connected peer ("127.0.0.1", "::1", "::ffff:127.0.0.1").
bool LoopbackIp(const char* ip) {
  const std::string a = ip ? ip : "";
  return a.rfind("127.", 0) == 0 || a == "::1" || a.rfind("::ffff:127.", 0) == 0;
}

// Plain http goes only to loopback, judged on the address actually connected (docs/cli.md), not on the URL's
// text. Every URL that is not https:// or file:// (in any letter case) is guarded.
struct PeerGuard {
  bool plain_http = false;
  bool refused = false;
  std::string peer;
};

bool StartsWithNoCase(const std::string& s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

bool NeedsLoopbackPeer(const std::string& url) {
  return !StartsWithNoCase(url, "https://") && !StartsWithNoCase(url, "file://");
}

struct StreamState {
  const StreamRequest* req = nullptr;
  uint64_t bytes = 0;
  bool stopped = false;
  PeerGuard guard;
};

size_t OnStreamData(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<StreamState*>(user);
  const size_t len = size * n;
  if (!st->req->on_data(data, len)) {
    st->stopped = true;
    return 0;
  }
  st->bytes += len;
  return len;
}

// Runs after the connection is made and before the request is sent, so a refused request never leaves.
int OnPrereq(void* user, char* conn_primary_ip, char*, int, int) {
  auto* g = static_cast<PeerGuard*>(user);
  g->peer = conn_primary_ip ? conn_primary_ip : "";
  if (g->plain_http && !LoopbackIp(conn_primary_ip)) {
    g->refused = true;
    return CURL_PREREQFUNC_ABORT;
  }
  return CURL_PREREQFUNC_OK;
}

bool Retryable(CURLcode rc, long status) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    case CURLE_HTTP_RETURNED_ERROR:
      return status >= 500 || status == 429;
    default:
      return false;
  }
}

// What every transfer keeps, downloads and API calls alike: TLS verification always on (with the request's
// own CA file where it has one), at most five redirects and never to plain http, no signals, and an
// Authorization header sent to the host asked, never to the host a redirect leads to (libcurl's default,
// said here so no one turns it on: registries send blobs to a CDN by redirect).
void SetTransferPolicy(const CurlApi& api, CURL* curl, const std::string& ca_file) {
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  api.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  api.easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
  api.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  api.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!ca_file.empty()) api.easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  api.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http,file");
  api.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "https");
  api.easy_setopt(curl, CURLOPT_USERAGENT, "gpuprep/" GPUPREP_VERSION);
}

// Sets a stream's transfer options: where it writes, its bounds (redirects, TLS, protocols, timeouts, stall
// speed) and where it resumes.
void SetStreamOptions(const CurlApi& api, CURL* curl, const StreamRequest& req, StreamState& st,
                      char* errbuf) {
  api.easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnStreamData);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &st);
  api.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  api.easy_setopt(curl, CURLOPT_FAILONERROR, 1L);  // an error page is never taken for the archive
  SetTransferPolicy(api, curl, req.ca_file);
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout.count()));
  api.easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  api.easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(req.stall_timeout.count()));
  api.easy_setopt(curl, CURLOPT_BUFFERSIZE, 512L * 1024);
  if (req.offset > 0) api.easy_setopt(curl, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(req.offset));
}

// Whether every extra request header is one "Name: value" line.
bool OneLineHeaders(const std::vector<std::string>& headers) {
  for (const auto& h : headers) {
    if (h.find_first_of("\r\n") != std::string::npos || h.find(':') == std::string::npos) return false;
  }
  return true;
}

// Sets a request's transfer options: where body and headers go, the extra headers, its bounds (redirects,
// TLS, protocols, timeouts).
void SetSendOptions(const CurlApi& api, CURL* curl, const HttpRequest& req, Sink& sink, curl_slist* headers,
                    char* errbuf) {
  api.easy_setopt(curl, CURLOPT_URL, req.url.c_str());
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnData);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  api.easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
  if (headers) api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  api.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  SetTransferPolicy(api, curl, req.ca_file);
  api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::min<long>(req.timeout.count(), 15000)));
}

// How a request's transfer ended: libcurl's code and message, the address connected to and the last URL.
struct SendEnd {
  CURLcode rc = CURLE_OK;
  const char* errbuf = nullptr;  // libcurl's message ("" when none)
  std::string connected;         // "" when unknown
  std::string last_url;          // after redirects (only ever to https)
};

// Fills the response of a finished transfer (its status already set): the first problem found, in order
// (a peer refused, plain http answered from elsewhere, a body or headers too big, libcurl's error), else
// the body and headers.
void FinishSend(const CurlApi& api, const SendEnd& end, const PeerGuard& guard, Sink& sink,
                const std::string& url, HttpResponse& res) {
  if (guard.refused) {
    res.error = "plain http connected to " + guard.peer + ", not a loopback address; no request was sent";
  } else if (NeedsLoopbackPeer(end.last_url) && end.rc == CURLE_OK && !IsLoopbackHost(end.connected) &&
             end.connected != "::1") {
    res.error = "plain http connected to " +
                (end.connected.empty() ? std::string("an unknown address") : end.connected) +
                ", not a loopback address; nothing was used";
    res.status = 0;
  } else if (sink.too_big) {
    const size_t m = sink.max_body;
    res.error = "response larger than " +
                (m % (1u << 20) == 0 ? std::to_string(m >> 20) + " MiB" : std::to_string(m >> 10) + " KiB");
  } else if (sink.headers_too_big) {
    res.error = "response headers larger than 64 KiB";
  } else if (end.rc != CURLE_OK) {
    res.error = end.errbuf[0] ? end.errbuf : api.easy_strerror(end.rc);
  } else {
    res.body = std::move(sink.body);
    res.headers = std::move(sink.headers);
    if (res.status == 0 && url.rfind("file://", 0) == 0) res.status = 200;  // file:// has no status
  }
}

class CurlHttpClient : public HttpClient {
 public:
  StreamResult Stream(const StreamRequest& req) override {
    StreamResult res;
    const CurlApi& api = CurlLib();
    if (!api.handle) {
      res.error = api.error;
      return res;
    }
    CURL* curl = api.easy_init();
    if (!curl) {
      res.error = "curl_easy_init failed";
      return res;
    }
    StreamState st;
    st.req = &req;
    st.guard.plain_http = NeedsLoopbackPeer(req.url);
    char errbuf[CURL_ERROR_SIZE] = {0};
    SetStreamOptions(api, curl, req, st, errbuf);
    if (st.guard.plain_http) {
      api.easy_setopt(curl, CURLOPT_PREREQDATA, &st.guard);
      if (api.easy_setopt(curl, CURLOPT_PREREQFUNCTION, &OnPrereq) != CURLE_OK) {
        api.easy_cleanup(curl);
        res.error =
            req.url + ": this libcurl cannot tell which address it connected to, so plain http is refused";
        return res;
      }
    }
    CURLcode rc = api.easy_perform(curl);
    long status = 0;
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    api.easy_cleanup(curl);
    res.status = static_cast<int>(status);
    res.bytes = st.bytes;
    res.stopped = st.stopped;
    if (st.guard.refused) {
      res.error = req.url + ": plain http is only allowed from a loopback address (connected to " +
                  st.guard.peer + ")";
    } else if (st.stopped) {
      res.error = "stopped";
    } else if (rc != CURLE_OK) {
      res.error = errbuf[0] ? errbuf : api.easy_strerror(rc);
      res.retryable = Retryable(rc, status);
    }
    return res;
  }

  HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout) override {
    HttpRequest req;
    req.url = url;
    req.timeout = timeout;
    HttpResponse r = Send(req);
    r.headers.clear();  // Get answers status and body only
    return r;
  }

  HttpResponse Send(const HttpRequest& req) override {
    HttpResponse res;
    const std::string& url = req.url;
    if (!OneLineHeaders(req.headers)) {
      res.error = "a request header is not one \"Name: value\" line; nothing was sent";
      return res;
    }
    const CurlApi& api = CurlLib();
    if (!api.handle) {
      res.error = api.error;
      return res;
    }
    CURL* curl = api.easy_init();
    if (!curl) {
      res.error = "curl_easy_init failed";
      return res;
    }
    curl_slist* headers = nullptr;
    for (const auto& h : req.headers) headers = api.slist_append(headers, h.c_str());
    Sink sink;
    if (req.max_body) sink.max_body = std::min(req.max_body, kMaxDownloadBody);
    char errbuf[CURL_ERROR_SIZE] = {0};
    SetSendOptions(api, curl, req, sink, headers, errbuf);
    // Plain http to a peer that is not loopback is stopped before the request is sent (where this libcurl
    // has CURLOPT_PREREQFUNCTION, 7.80 and later), and its answer is never used (the check after the
    // transfer, on any libcurl).
    PeerGuard guard;
    guard.plain_http = NeedsLoopbackPeer(url);
    if (guard.plain_http) {
      api.easy_setopt(curl, CURLOPT_PREREQDATA, &guard);
      api.easy_setopt(curl, CURLOPT_PREREQFUNCTION, &OnPrereq);
    }
    SendEnd end;
    end.rc = api.easy_perform(curl);
    end.errbuf = errbuf;
    long status = 0;
    api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    const char* ip = nullptr;
    const char* effective = nullptr;
    api.easy_getinfo(curl, CURLINFO_PRIMARY_IP, &ip);
    api.easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
    end.connected = ip ? ip : "";
    end.last_url = effective ? effective : url;
    api.easy_cleanup(curl);
    if (headers) api.slist_free_all(headers);
    res.status = static_cast<int>(status);
    FinishSend(api, end, guard, sink, url, res);
    return res;
  }
};

}  // namespace

std::unique_ptr<HttpClient> MakeCurlHttpClient() { return std::make_unique<CurlHttpClient>(); }

}  // namespace gp::sys
