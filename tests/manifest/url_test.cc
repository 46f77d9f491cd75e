// --manifest https://...: fetched through the HttpClient seam; the same rules apply to fetched stacks.
#include <catch2/catch.hpp>
#include <map>

#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "manifest/tree.h"
#include "sys/http.h"

using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {
class FakeHttp : public gp::sys::HttpClient {
 public:
  std::map<std::string, gp::sys::HttpResponse> answers;
  std::vector<std::string> gets;
  gp::sys::HttpResponse Get(const std::string& url, std::chrono::milliseconds) override {
    gets.push_back(url);
    auto it = answers.find(url);
    if (it != answers.end()) return it->second;
    gp::sys::HttpResponse r;
    r.status = 404;
    return r;
  }
};

const char* kRemote =
    "apiVersion: gpuprep/v1\nkind: Stack\nextends: hopper-r580-cuda13.0\nmetadata:\n  name: remote\n"
    "workload:\n  min_cpus_per_gpu: 16\n";
}  // namespace

TEST_CASE("stacks from https URLs extend embedded stacks; errors name the URL", "[manifest]") {
  FakeHttp http;
  http.answers["https://example.com/site.yaml"] = {200, kRemote, ""};
  http.answers["http://127.0.0.1:8080/site.yaml"] = {200, kRemote, ""};
  http.answers["https://example.com/bad.yaml"] = {200, std::string(kRemote) + "  cpus: 1\n", ""};
  m::LoadContext ctx{nullptr, &http};

  m::Stack s = m::LoadStack("https://example.com/site.yaml", ctx);
  CHECK(s.name == "remote");
  CHECK(s.source == "https://example.com/site.yaml");
  CHECK(s.workload.min_cpus_per_gpu == 16);
  CHECK(s.origins.at("workload.min_cpus_per_gpu") == "https://example.com/site.yaml:7:21");
  CHECK(s.driver.branch == 580);
  CHECK(http.gets == std::vector<std::string>{"https://example.com/site.yaml"});

  CHECK(m::LoadStack("http://127.0.0.1:8080/site.yaml", ctx).name == "remote");  // loopback mirror
  CHECK(
      ErrorOf([&] { m::LoadStack("https://example.com/bad.yaml", ctx); }) ==
      "2 https://example.com/bad.yaml:8:3: unknown key \"cpus\" (expected one of: profile, min_cpus_per_gpu, "
      "min_ram_per_gpu, min_shm_per_gpu, task, nodes)");
  CHECK(ErrorOf([&] { m::LoadStack("https://example.com/none.yaml", ctx); }) ==
        "2 cannot fetch https://example.com/none.yaml: HTTP status 404");
  CHECK(ErrorOf([&] { m::LoadStack("http://127.0.0.1.example.com/x.yaml", ctx); }) ==
        "2 plain http is accepted only for loopback addresses: use https://");
}

namespace {
// A client that answers Send too, recording the body limit each request carried.
class LimitedHttp : public FakeHttp {
 public:
  std::vector<size_t> limits;
  gp::sys::HttpResponse Send(const gp::sys::HttpRequest& req) override {
    limits.push_back(req.max_body);
    gp::sys::HttpResponse r = Get(req.url, req.timeout);
    if (req.max_body != 0 && r.body.size() > req.max_body) {
      r = {};
      r.error = "response larger than " + std::to_string(req.max_body >> 20) + " MiB";
    }
    return r;
  }
};
}  // namespace

TEST_CASE("a stack URL's body is capped at the manifest limit while it downloads", "[manifest]") {
  LimitedHttp http;
  http.answers["https://example.com/site.yaml"] = {200, kRemote, ""};
  http.answers["https://example.com/huge.yaml"] = {200, std::string(2u << 20, '#'), ""};
  m::LoadContext ctx{nullptr, &http};
  CHECK(m::LoadStack("https://example.com/site.yaml", ctx).name == "remote");
  CHECK(ErrorOf([&] { m::LoadStack("https://example.com/huge.yaml", ctx); }) ==
        "2 cannot fetch https://example.com/huge.yaml: response larger than 1 MiB");
  CHECK(http.limits == std::vector<size_t>{m::kMaxManifestBytes, m::kMaxManifestBytes});
}
