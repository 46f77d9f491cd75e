// The network seams.
//  - HttpClient: https downloads (manifests by URL, keyrings). The real one dlopens libcurl on first use
//    so commands that never download (doctor) never pay for libcurl's 33 shared libraries.
//  - UnixHttp: plain HTTP/1.1 GET over a unix socket, for the Docker Engine API (/var/run/docker.sock).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>

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

class UnixHttp {
 public:
  virtual ~UnixHttp() = default;
  // GET `path` (e.g. "/v1.41/info") on the unix socket at `socket_path`; connect+read bounded by timeout.
  virtual HttpResponse Get(const std::string& socket_path, const std::string& path,
                           std::chrono::milliseconds timeout) = 0;
};

class RealUnixHttp : public UnixHttp {
 public:
  HttpResponse Get(const std::string& socket_path, const std::string& path,
                   std::chrono::milliseconds timeout) override;
};

}  // namespace gp::sys
