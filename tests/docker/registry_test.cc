// Reading an image's CUDA from its registry before any pull: the real curl client against a stand-in
// registry over loopback HTTPS (registry_server.py): the anonymous token flow, an index with several
// platforms, OCI and Docker manifests, NGC's four-part CUDA_VERSION, and every refusal.
#include "docker/registry.h"

#include <catch2/catch.hpp>

#include "docker/registry_fixture.h"

using namespace gp;
using nlohmann::json;

namespace {

const std::vector<std::string> kNgcEnv = {
    "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/"
    "bin",
    "CUDA_VERSION=12.2.2.009", "CUDA_DRIVER_VERSION=535.104.05", "NVIDIA_REQUIRE_CUDA=cuda>=9.0",
    "NVIDIA_VISIBLE_DEVICES=all"};

struct Repo {
  test::Doc config, arm_config, amd64, arm64, index;
};

// nvidia/pytorch:24.05-py3 as NGC serves it: an OCI index (linux/arm64, linux/amd64 and an attestation).
Repo PytorchRepo() {
  Repo r;
  r.config = test::ConfigDoc(kNgcEnv);
  r.amd64 = test::ManifestDoc(r.config);
  r.arm_config = test::ConfigDoc({"CUDA_VERSION=12.4.1.003"});
  r.arm64 = test::ManifestDoc(r.arm_config);
  json attestation = r.amd64.Descriptor(test::Platform("unknown", "unknown"));
  attestation["annotations"] = {{"vnd.docker.reference.type", "attestation-manifest"}};
  r.index = test::MakeDoc(test::kOciIndexType,
                          {{"schemaVersion", 2},
                           {"mediaType", test::kOciIndexType},
                           {"manifests",
                            {r.arm64.Descriptor(test::Platform("linux", "arm64")),
                             r.amd64.Descriptor(test::Platform("linux", "amd64")), attestation}}});
  return r;
}

json Entry(const test::Doc& d) { return {{"type", d.type}, {"body", d.body}}; }

json State(const Repo& r, const std::string& token = "anon-token-1") {
  json s = {{"token", token}, {"blob_redirect", true}};
  s["manifests"]["nvidia/pytorch"] = {{"24.05-py3", Entry(r.index)},
                                      {r.index.digest, Entry(r.index)},
                                      {r.amd64.digest, Entry(r.amd64)},
                                      {r.arm64.digest, Entry(r.arm64)}};
  s["blobs"]["nvidia/pytorch"] = {{r.config.digest, r.config.body}, {r.arm_config.digest, r.arm_config.body}};
  return s;
}

docker::ImageRef Ref(const test::StandInRegistry& reg, const std::string& rest) {
  auto r = docker::ParseImageRef(reg.domain() + "/" + rest);
  REQUIRE(r);
  return *r;
}

std::string ReadFails(sys::HttpClient& http, const docker::ImageRef& ref,
                      const docker::RegistryOptions& opt = {}) {
  std::string error;
  auto img = docker::ReadRemoteImage(http, ref, opt, &error);
  CHECK_FALSE(img);
  return error;
}

}  // namespace

TEST_CASE("registry: Bearer challenges as Docker Hub and nvcr.io send them", "[docker][registry]") {
  auto hub = docker::ParseBearerChallenge(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull")");
  REQUIRE(hub);
  CHECK(hub->realm == "https://auth.docker.io/token");
  CHECK(hub->service == "registry.docker.io");
  CHECK(hub->scope == "repository:library/ubuntu:pull");
  auto ngc = docker::ParseBearerChallenge(
      R"(Bearer realm="https://nvcr.io/proxy_auth",scope="repository:nvidia/pytorch:pull,push")");
  REQUIRE(ngc);
  CHECK(ngc->realm == "https://nvcr.io/proxy_auth");
  CHECK(ngc->service.empty());
  // Two challenges in one value, a quoted-pair, a token value, and case in scheme and names.
  auto two = docker::ParseBearerChallenge(
      R"(Basic realm="x", bearer Realm="https://a.example/t?x=\"1\"", service=svc)");
  REQUIRE(two);
  CHECK(two->realm == R"(https://a.example/t?x="1")");
  CHECK(two->service == "svc");
  CHECK_FALSE(docker::ParseBearerChallenge(R"(Basic realm="registry")"));
  CHECK_FALSE(docker::ParseBearerChallenge(R"(Bearer service="x")"));                 // no realm
  CHECK_FALSE(docker::ParseBearerChallenge(R"(Bearer realm="https://a.example/t)"));  // unterminated
  CHECK_FALSE(docker::ParseBearerChallenge("Bearer realm=\"https://a.example/\r\nX: y\""));
  CHECK_FALSE(docker::ParseBearerChallenge("Basic dXNlcjpwYXNz=="));

  CHECK(docker::CheckRealm("https://auth.docker.io/token").empty());
  CHECK(docker::CheckRealm("http://127.0.0.1:5000/token").empty());
  CHECK(docker::CheckRealm("http://auth.example/token") ==
        "the token realm \"http://auth.example/token\" is not https (plain http only on a loopback address)");
  CHECK_THAT(docker::CheckRealm("https://user:pw@auth.example/token"), Catch::Contains("is not a URL"));
  CHECK_THAT(docker::CheckRealm("ftp://auth.example/token"), Catch::Contains("is not https"));
  CHECK(docker::RegistryHost("docker.io") == "registry-1.docker.io");
  CHECK(docker::RegistryHost("nvcr.io") == "nvcr.io");
  CHECK(docker::PlatformArchitecture("x86_64") == "amd64");
  CHECK(docker::PlatformArchitecture("aarch64") == "arm64");
}

TEST_CASE("registry: a tag's index, the amd64 manifest and its config, through the anonymous token",
          "[docker][registry]") {
  test::TempRoot dir;
  test::StandInRegistry reg(dir);
  test::TrustingHttp http(reg.ca());
  const Repo repo = PytorchRepo();
  reg.SetState(State(repo));

  std::string error;
  auto img = docker::ReadRemoteImage(http, Ref(reg, "nvidia/pytorch:24.05-py3"), {}, &error);
  REQUIRE(img);
  CHECK(error.empty());
  CHECK(img->digest == repo.index.digest);
  CHECK(img->platform_digest == repo.amd64.digest);
  CHECK(img->config_digest == repo.config.digest);
  CHECK(img->env == kNgcEnv);
  auto cuda = docker::CudaFromEnv(img->env);
  CHECK(cuda.cuda == "12.2.2");
  CHECK(cuda.cuda_raw == "12.2.2.009");
  CHECK(cuda.driver == "535.104.05");
  CHECK(cuda.require == "cuda>=9.0");

  // What went over the wire: 401, the token for exactly this repository, then every request with it.
  auto log = reg.Log();
  REQUIRE(log.size() == 6);
  CHECK(log[0]["status"] == 401);
  CHECK(log[0]["auth"] == "");
  CHECK_THAT(log[0]["accept"].get<std::string>(), Catch::Contains(test::kOciIndexType) &&
                                                      Catch::Contains(test::kDockerListType) &&
                                                      Catch::Contains(test::kDockerManifestType));
  CHECK(log[1]["path"] == "/token?service=stand-in%20registry&scope=repository%3Anvidia%2Fpytorch%3Apull");
  CHECK(log[1]["auth"] == "");
  CHECK(log[2]["path"] == "/v2/nvidia/pytorch/manifests/24.05-py3");
  CHECK(log[2]["auth"] == "Bearer anon-token-1");
  CHECK(log[3]["path"] == "/v2/nvidia/pytorch/manifests/" + repo.amd64.digest);
  CHECK(log[3]["auth"] == "Bearer anon-token-1");
  CHECK(log[4]["path"] == "/v2/nvidia/pytorch/blobs/" + repo.config.digest);
  CHECK(log[4]["status"] == 307);
  // The blob's storage gets no Authorization header (it would refuse it, as a storage bucket does).
  CHECK(log[5]["path"] == "/cdn/nvidia/pytorch/" + repo.config.digest);  // at https://localhost:PORT
  CHECK(log[5]["auth"] == "");
  CHECK(log[5]["status"] == 200);

  // One registry for every case below, each in turn (not Catch2 sections, which would start a server and
  // make a certificate again per case); each case sets the state it needs.
  {
    INFO("the arm64 image of the same index");
    reg.SetState(State(repo));
    docker::RegistryOptions arm;
    arm.architecture = "arm64";
    auto a = docker::ReadRemoteImage(http, Ref(reg, "nvidia/pytorch:24.05-py3"), arm, &error);
    REQUIRE(a);
    CHECK(a->platform_digest == repo.arm64.digest);
    CHECK(docker::CudaFromEnv(a->env).cuda == "12.4.1");
  }
  {
    INFO("pinned by the index's digest: the same image; by a digest the bytes do not have: refused");
    reg.SetState(State(repo));
    auto pinned = docker::ReadRemoteImage(http, Ref(reg, "nvidia/pytorch@" + repo.index.digest), {}, &error);
    REQUIRE(pinned);
    CHECK(pinned->digest == repo.index.digest);
    json s = State(repo);
    const std::string other = "sha256:" + std::string(64, 'e');
    s["manifests"]["nvidia/pytorch"][other] = Entry(repo.index);  // a registry serving other bytes
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3@" + other)) ==
          "the manifest of " + reg.domain() + "/nvidia/pytorch:24.05-py3@" + other + " is " +
              repo.index.digest + ", not " + other + " as asked; refused");
  }
  {
    INFO("an index without the host's platform");
    reg.SetState(State(repo));
    docker::RegistryOptions ppc;
    ppc.architecture = "ppc64le";
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3"), ppc) ==
          "the index of " + reg.domain() +
              "/nvidia/pytorch:24.05-py3 has no linux/ppc64le image (it has: linux/arm64, "
              "linux/amd64)");
  }
}

TEST_CASE("registry: a single Docker v2 manifest without authentication", "[docker][registry]") {
  test::TempRoot dir;
  test::StandInRegistry reg(dir);
  test::TrustingHttp http(reg.ca());
  auto config =
      test::ConfigDoc({"CUDA_VERSION=12.4.1", "NV_CUDA_LIB_VERSION=12.4.1-1"}, test::kDockerConfigType);
  auto manifest = test::ManifestDoc(config, test::kDockerManifestType);
  json s = {{"token", nullptr}};
  s["manifests"]["nvidia/cuda"]["12.4.1-base-ubuntu22.04"] = Entry(manifest);
  s["blobs"]["nvidia/cuda"][config.digest] = config.body;
  reg.SetState(s);
  std::string error;
  auto img = docker::ReadRemoteImage(http, Ref(reg, "nvidia/cuda:12.4.1-base-ubuntu22.04"), {}, &error);
  REQUIRE(img);
  CHECK(img->digest == manifest.digest);
  CHECK(img->platform_digest.empty());
  CHECK(docker::CudaFromEnv(img->env).cuda == "12.4.1");
  CHECK(docker::CudaFromEnv(img->env).driver.empty());
  auto log = reg.Log();
  REQUIRE(log.size() == 2);  // no token asked for: none was needed
  CHECK(log[1]["path"] == "/v2/nvidia/cuda/blobs/" + config.digest);
}

TEST_CASE("registry: what is refused, in words that say why", "[docker][registry]") {
  test::TempRoot dir;
  test::StandInRegistry reg(dir);
  test::TrustingHttp http(reg.ca());
  const Repo repo = PytorchRepo();
  const std::string base = "https://" + reg.domain() + "/v2/nvidia/";

  // One registry for every case below, each in turn (not Catch2 sections, which would start a server and
  // make a certificate again per case); each case sets the state it needs.
  {
    INFO("a tag the registry does not have");
    reg.SetState(State(repo));
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:99.01-py3")) ==
          "GET " + base + "pytorch/manifests/99.01-py3: HTTP 404 MANIFEST_UNKNOWN: manifest unknown");
  }
  {
    INFO("a private repository: 401 even with the anonymous token");
    json s = State(repo);
    s["private"] = {"nvidia/pytorch"};
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")) ==
          "GET " + base +
              "pytorch/manifests/24.05-py3: HTTP 401 UNAUTHORIZED: authentication required even with an "
              "anonymous token (a private repository, or one that does not exist)");
  }
  {
    INFO("the token service refuses anonymous access");
    json s = State(repo);
    s["token_status"] = 401;
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")) ==
          "token from https://" + reg.domain() + "/token: HTTP 401 (anonymous access refused)");
  }
  {
    INFO("a realm that is not https is never asked");
    json s = State(repo);
    s["realm"] = "http://auth.example/token";
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")) ==
          reg.domain() +
              ": the token realm \"http://auth.example/token\" is not https (plain http only on a loopback "
              "address)");
    CHECK(reg.Log().size() == 1);
  }
  {
    INFO("a config blob whose bytes are not the descriptor's digest");
    json s = State(repo);
    std::string tampered = repo.config.body;
    tampered.replace(tampered.find("12.2.2.009"), 10, "13.9.9.999");
    s["blobs"]["nvidia/pytorch"][repo.config.digest] = tampered;
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")) ==
          "the config blob of " + reg.domain() +
              "/nvidia/pytorch:24.05-py3 is sha256:" + sys::Sha256Hex(tampered) + " (" +
              std::to_string(tampered.size()) + " bytes), but the manifest's descriptor says " +
              repo.config.digest + " (" + std::to_string(repo.config.body.size()) + " bytes); refused");
  }
  {
    INFO("a platform manifest that is not the one the index names");
    json s = State(repo);
    auto other = test::ManifestDoc(test::ConfigDoc({"CUDA_VERSION=11.0"}));
    s["manifests"]["nvidia/pytorch"][repo.amd64.digest] = Entry(other);
    reg.SetState(s);
    CHECK_THAT(
        ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")),
        Catch::Contains("the linux/amd64 manifest of") &&
            Catch::Contains("is " + other.digest + ", not " + repo.amd64.digest + " as asked; refused"));
  }
  {
    INFO("a Docker-Content-Digest that disagrees with the bytes");
    json s = State(repo);
    s["manifests"]["nvidia/pytorch"]["24.05-py3"]["digest_header"] = "sha256:" + std::string(64, 'f');
    reg.SetState(s);
    CHECK_THAT(ReadFails(http, Ref(reg, "nvidia/pytorch:24.05-py3")),
               Catch::Contains("Docker-Content-Digest sha256:ffff") && Catch::EndsWith("; refused"));
  }
  {
    INFO("a manifest that is not JSON, or nested beyond reason");
    json s = State(repo);
    s["manifests"]["nvidia/pytorch"]["bad"] = {{"type", test::kOciManifestType},
                                               {"body", "{\"schemaVersion\": 2,"}};
    s["manifests"]["nvidia/pytorch"]["deep"] = {{"type", test::kOciManifestType},
                                                {"body", std::string(100, '[') + std::string(100, ']')}};
    reg.SetState(s);
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:bad")) ==
          "the manifest of " + reg.domain() + "/nvidia/pytorch:bad: not a JSON object");
    CHECK(ReadFails(http, Ref(reg, "nvidia/pytorch:deep")) ==
          "the manifest of " + reg.domain() + "/nvidia/pytorch:deep: nested deeper than 16 levels");
  }
  {
    INFO("no registry at all");
    docker::RegistryOptions quick;
    quick.timeout = std::chrono::milliseconds(3000);
    auto ref = docker::ParseImageRef("127.0.0.1:1/nvidia/pytorch:24.05-py3");
    REQUIRE(ref);
    CHECK_THAT(ReadFails(http, *ref, quick),
               Catch::StartsWith("GET https://127.0.0.1:1/v2/nvidia/pytorch/manifests/"));
  }
}
