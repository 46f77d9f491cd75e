// The network seams.
//  - HttpClient: https downloads (manifests by URL, keyrings). The real one dlopens libcurl on first use
//    so commands that never download (doctor) never pay for libcurl's 33 shared libraries.
//  - UnixHttp: plain HTTP/1.1 GET over a unix socket, for the Docker Engine API (/var/run/docker.sock).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace gp::sys {

struct HttpResponse {
  int status = 0;          // HTTP status; 0 when no response
  std::string body;
  std::string error;       // transport error ("connection refused", "timed out", TLS failure)
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // GET into memory. Only https, or http/file for loopback and local mirrors (caller enforces pins).
  virtual HttpResponse Get(const std::string& url, std::chrono::milliseconds timeout) = 0;
};

// libcurl through dlopen("libcurl.so.4"); TLS verification always on.
std::unique_ptr<HttpClient> MakeCurlHttpClient();

// Any request over the unix socket (the Engine API's POST/DELETE calls, streamed image pulls).
struct UnixRequest {
  std::string method = "GET";
  std::string path;                        // "/v1.47/images/create?fromImage=..." (caller escapes the query)
  std::string body;                        // sent as application/json when not empty
  std::chrono::milliseconds timeout{2000};  // whole request; with on_data: the longest silence between bytes
  std::function<void(std::string_view)> on_data;  // body bytes as they arrive (chunked coding removed)
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
