// doctor --registry and launch --registry end to end (gp::cli::RunCli), against the stand-in registry over
// loopback HTTPS: an image no table knows is judged by the CUDA its config declares; without the flag
// nothing reaches the network.
#include <catch2/catch.hpp>
#include <sstream>

#include "cli/context.h"
#include "docker/registry_fixture.h"
#include "support/cli.h"
#include "support/launch_support.h"

using namespace gp;
using nlohmann::json;

namespace {

// gpuprep ARGS in-process, with `http` as the only way out (a registry request reaches it), no runner,
// dlopen or Docker socket (the tests pass --root or --host).
test::CliRun Run(const std::vector<std::string>& args, test::TrustingHttp& http) {
  sys::DiskFs local("/");
  std::ostringstream out, err;
  cli::Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.local_fs = &local;
  ctx.make_fs = [](const std::string& root) {
    return std::make_unique<sys::DiskFs>(root.empty() ? "/" : root);
  };
  ctx.make_http = [&http]() -> std::unique_ptr<sys::HttpClient> {
    struct Borrowed : sys::HttpClient {
      explicit Borrowed(test::TrustingHttp& real) : h(real) {}
      sys::HttpResponse Get(const std::string& u, std::chrono::milliseconds t) override {
        return h.Get(u, t);
      }
      sys::HttpResponse Send(const sys::HttpRequest& r) override { return h.Send(r); }
      test::TrustingHttp& h;
    };
    return std::make_unique<Borrowed>(http);
  };
  std::vector<const char*> argv = {"gpuprep"};
  for (const auto& a : args) argv.push_back(a.c_str());
  test::CliRun r;
  r.code = cli::RunCli(static_cast<int>(argv.size()), argv.data(), ctx);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// One image, nvidia/pytorch:TAG, as a single OCI manifest whose config declares `cuda`.
json OneImage(const std::string& tag, const std::string& cuda) {
  auto config = test::ConfigDoc({"CUDA_VERSION=" + cuda, "NVIDIA_REQUIRE_CUDA=cuda>=9.0"});
  auto manifest = test::ManifestDoc(config);
  json s = {{"token", "t0k3n"}};
  s["manifests"]["nvidia/pytorch"][tag] = {{"type", manifest.type}, {"body", manifest.body}};
  s["blobs"]["nvidia/pytorch"][config.digest] = config.body;
  return s;
}

json ImageLayer(const std::string& doctor_json) {
  const json doc = json::parse(doctor_json);
  for (const auto& l : doc["layers"])
    if (l["name"] == "image") return l;
  return nullptr;
}

}  // namespace

TEST_CASE("doctor --registry: the stack's image judged by the CUDA its registry's config declares",
          "[cli][registry]") {
  test::TempRoot dir;
  test::StandInRegistry reg(dir);
  test::TrustingHttp http(reg.ca());
  reg.SetState(OneImage("24.05-py3", "12.2.2.009"));
  const std::string image = reg.domain() + "/nvidia/pytorch:24.05-py3";
  dir.Write("/site.yaml",
            "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
            "metadata: {name: site}\nimage: {ref: \"" +
                image + "\"}\n");
  const std::string site = dir.path() + "/site.yaml";
  const std::string root = std::string(GP_FIXTURES) + "/hosts/healthy-h100";

  // Offline by default: the stack says unknown, and nothing is asked of the network.
  auto offline = Run({"doctor", "--json", "--root", root, "--manifest", site}, http);
  json layer = ImageLayer(offline.out);
  CHECK(layer["status"] == "skip");
  CHECK(layer["findings"][0]["code"] == "image.cuda-unknown");
  CHECK(http.sent == 0);

  auto online = Run({"doctor", "--json", "--registry", "--root", root, "--manifest", site}, http);
  INFO(online.err);
  layer = ImageLayer(online.out);
  CHECK(layer["status"] == "ok");
  CHECK(layer["findings"][0]["code"] == "image.driver-compat");
  CHECK_THAT(
      layer["detail"].get<std::string>(),
      Catch::Contains("image CUDA 12.2.2 (the image's CUDA_VERSION 12.2.2.009, read from its registry)"));
  CHECK(http.sent == 4);  // 401, token, manifest, config

  // A tag the registry does not have: a warning that says so, and the tables decide (unknown: skip).
  dir.Write("/gone.yaml",
            "apiVersion: gpuprep/v1\nkind: Stack\nextends: site.yaml\nmetadata: {name: gone}\n"
            "image: {ref: \"" +
                reg.domain() + "/nvidia/pytorch:99.01-py3\"}\n");
  auto gone =
      Run({"doctor", "--json", "--registry", "--root", root, "--manifest", dir.path() + "/gone.yaml"}, http);
  layer = ImageLayer(gone.out);
  CHECK(gone.code == 0);
  CHECK(layer["status"] == "warn");
  CHECK(layer["findings"][0]["code"] == "image.registry");
  CHECK_THAT(layer["findings"][0]["message"].get<std::string>(),
             Catch::Contains("could not read " + reg.domain() +
                             "/nvidia/pytorch:99.01-py3 from its registry: GET ") &&
                 Catch::Contains("HTTP 404 MANIFEST_UNKNOWN: manifest unknown"));
}

TEST_CASE("launch --registry: a tag no table knows is checked against the host's driver",
          "[cli][registry][launch]") {
  test::TempRoot dir;
  test::StandInRegistry reg(dir);
  test::TrustingHttp http(reg.ca());
  reg.SetState(OneImage("26.01-py3", "13.1.0.036"));
  const std::string image = reg.domain() + "/nvidia/pytorch:26.01-py3";
  const std::string old = test::Snapshot("old-driver.json");  // 525.147.05 on H100s

  auto offline = Run({"launch", "--host", old, "--image", image}, http);
  CHECK(offline.code == 0);
  CHECK(offline.err ==
        "gpuprep: the CUDA version inside " + image +
            " is not known to gpuprep; the driver was not checked (--registry reads it from the "
            "image's registry)\n");
  CHECK(http.sent == 0);

  auto online = Run({"launch", "--host", old, "--image", image, "--registry"}, http);
  CHECK(online.code == 2);
  CHECK(online.out.empty());
  CHECK(online.err == "gpuprep: error: --image: driver 525.147.05 is too old for " + image +
                          "'s CUDA 13.1.0 (needs >= 590.44.01)\n");

  // The registry cannot be read: a warning, and launch goes on as without the flag.
  auto gone = Run(
      {"launch", "--host", old, "--image", reg.domain() + "/nvidia/pytorch:99.01-py3", "--registry"}, http);
  CHECK(gone.code == 0);
  CHECK_THAT(gone.err,
             Catch::StartsWith("gpuprep: could not read " + reg.domain() +
                               "/nvidia/pytorch:99.01-py3 from "
                               "its registry (GET ") &&
                 Catch::Contains("MANIFEST_UNKNOWN: manifest unknown); its CUDA comes from the stack's "
                                 "tables\n"));

  // A reference that is not one is never sent anywhere nor echoed raw: the flag's one error line.
  const int before = http.sent;
  auto hostile = Run({"launch", "--host", old, "--image", reg.domain() + "/x\n:1", "--registry"}, http);
  CHECK(hostile.code == 2);
  CHECK(hostile.err ==
        "gpuprep: error: --image: \"" + reg.domain() + "/x\\n:1\" is not an image reference\n");
  CHECK(http.sent == before);
}
