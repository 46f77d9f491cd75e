// The network seams.
//  - HttpClient: https downloads (manifests by URL, keyrings). The real one dlopens libcurl on first use
//    so commands that never download (doctor) never pay for libcurl's 33 shared libraries.
//  - UnixHttp: plain HTTP/1.1 GET over a unix socket, for the Docker Engine API (/var/run/docker.sock).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gp::sys {

struct HttpResponse {
  int status = 0;  // HTTP status; 0 when no response
  std::string body;
  std::string error;     // transport error ("connection refused", "timed out", TLS failure)
  bool stopped = false;  // a unix-socket request ended by its keep_running (error says so too)
  // The last response's headers (after redirects), names lower-cased, values trimmed; filled by Send only.
  std::vector<std::pair<std::string, std::string>> headers;
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // The first value of header `lower_name` ("www-authenticate"); "" when absent.
  std::string Header(std::string_view lower_name) const {
    for (const auto& [k, v] : headers)
      if (k == lower_name) return v;
    return "";
  }
};

// One GET with request headers that answers the response's headers too (a registry's token challenge,
// its Docker-Content-Digest). A non-2xx status is an answer (status, body and headers), not an error.
struct HttpRequest {
  std::string url;                           // as for Get
  std::vector<std::string> headers;          // "Name: value"; a line with CR or LF is refused, nothing sent
  std::chrono::milliseconds timeout{15000};  // the whole request
  std::string ca_file;  // a CA bundle to trust instead of the system's ("" = the system's)
  size_t max_body = 0;  // a larger body is an error; 0 = the client's limit (256 MiB)
};

// One streamed GET (a redistributable archive): the bytes go to `on_data` as they arrive, nothing is
// buffered whole. `offset` > 0 resumes an interrupted transfer (an HTTP Range request; a server that
// ignores the range is an error, never silently restarted).
struct StreamRequest {
  std::string url;  // https://, http:// (refused unless the address connected is loopback), file://
  uint64_t offset = 0;
  std::chrono::milliseconds connect_timeout{15000};
  std::chrono::seconds stall_timeout{60};  // abort when under 1 KiB/s for this long
  std::string ca_file;                     // a CA bundle to trust instead of the system's ("" = the system's)
  std::function<bool(const char* data, size_t len)> on_data;  // false stops the transfer
};

struct StreamResult {
  int status = 0;          // HTTP status (200/206); 0 for file:// or no response
  uint64_t bytes = 0;      // bytes handed to on_data by this call
  std::string error;       // "" when the transfer completed
  bool stopped = false;    // on_data returned false
  bool retryable = false;  // a dropped connection, a timeout or a 5xx: worth resuming
  bool ok() const { return error.empty(); }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // GET into memory. Only https, or http/file for loopback and local mirrors (caller enforces pins).
  virtual HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout) = 0;
  // GET with headers (see HttpRequest). The default serves a request without headers or CA through Get
  // (clients that only answer plain GETs; a body over `max_body` is then an error once answered); anything
  // else is refused as a transport error.
  virtual HttpResponse Send(const HttpRequest& req) {
    if (req.headers.empty() && req.ca_file.empty()) {
      HttpResponse r = Get(req.url, req.timeout);
      if (req.max_body != 0 && r.body.size() > req.max_body) {
        r = {};
        r.error = "response larger than " + std::to_string(req.max_body) + " bytes";
      }
      return r;
    }
    HttpResponse r;
    r.error = "this HTTP client cannot send request headers";
    return r;
  }
  // Streamed GET (see StreamRequest). Clients that cannot stream say so.
  virtual StreamResult Stream(const StreamRequest& req) {
    StreamResult r;
    r.error = "this HTTP client cannot stream " + req.url;
    return r;
  }
};

// libcurl through dlopen("libcurl.so.4"); TLS verification always on.
std::unique_ptr<HttpClient> MakeCurlHttpClient();

// Any request over the unix socket (the Engine API's POST/DELETE calls, streamed image pulls).
struct UnixRequest {
  std::string method = "GET";
  std::string path;                         // "/v1.47/images/create?fromImage=..." (caller escapes the query)
  std::string body;                         // sent as application/json when not empty
  std::chrono::milliseconds timeout{2000};  // whole request; with on_data: the longest silence between bytes
  std::function<void(std::string_view)> on_data;  // body bytes as they arrive (chunked coding removed)
  // Called once the status line and headers are read, before any body byte (a hijacked stream, such as
  // a container's attach, may then start what it streams).
  std::function<void(int status)> on_head;
  // Polled after each read and at least every kPollSlice while the answer is silent: false ends the
  // request at once (the response's `stopped` is set). With it, `timeout` still bounds a silence.
  std::function<bool()> keep_running;
  static constexpr std::chrono::milliseconds kPollSlice{200};
};

class UnixHttp {
 public:
  virtual ~UnixHttp() = default;
  // GET `path` (e.g. "/v1.41/info") on the unix socket at `socket_path`; connect+read bounded by timeout.
  virtual HttpResponse Get(const std::string& socket_path, const std::string& path,
                           std::chrono::milliseconds timeout) = 0;
  // Any method with an optional JSON body. The default serves plain GETs through Get() (test fakes that
  // only answer GETs); anything else is refused as a transport error.
  virtual HttpResponse Request(const std::string& socket_path, const UnixRequest& req) {
    if (req.method == "GET" && req.body.empty()) {
      HttpResponse r = Get(socket_path, req.path, req.timeout);
      if (req.on_data && !r.body.empty()) req.on_data(r.body);
      return r;
    }
    HttpResponse r;
    r.error = "this client cannot send " + req.method + " requests";
    return r;
  }
};

class RealUnixHttp : public UnixHttp {
 public:
  HttpResponse Get(const std::string& socket_path, const std::string& path,
                   std::chrono::milliseconds timeout) override;
  HttpResponse Request(const std::string& socket_path, const UnixRequest& req) override;
};

}  // namespace gp::sys
