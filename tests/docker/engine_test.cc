// docker::Engine against the stand-in Engine API (tests/support/fake_dockerd.py): the calls gpuprep makes,
// the streamed pull and its progress, the image's CUDA from its config, containers and the engine's errors.
#include "docker/engine.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "docker/image_ref.h"
#include "support/fake_engine.h"
#include "support/launch_support.h"
#include "support/temp_dir.h"
#include "sys/http.h"

using namespace gp;
using nlohmann::json;

namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kRef = "nvcr.io/nvidia/pytorch:23.10-py3";

json Registry(const std::string& bin = "") {
  json img = {{"digest", kDigest},
              {"id", "sha256:" + std::string(64, 'c')},
              {"env",
               {"PATH=/usr/local/bin:/usr/bin", "CUDA_VERSION=12.2.2.009", "CUDA_DRIVER_VERSION=535.104.05",
                "NVIDIA_REQUIRE_CUDA=cuda>=9.0"}},
              {"layers", {1000000, 3000000, 500}}};
  if (!bin.empty()) img["bin"] = bin;
  return {{"registry", {{kRef, img}}}};
}

}  // namespace

TEST_CASE("Engine: version, pull with streamed progress, digest and the image's CUDA", "[docker][engine]") {
  test::FakeEngine fake(Registry());
  sys::RealUnixHttp http;
  docker::Engine engine(http, fake.socket());
  auto v = engine.Version();
  REQUIRE(v);
  CHECK(v->version == "28.3.0");
  CHECK(v->api_version == "1.47");

  docker::EngineError err;
  CHECK_FALSE(engine.InspectImage(kRef, &err));
  CHECK(err.status == 404);
  CHECK(err.message == "No such image: " + kRef);

  std::vector<docker::PullProgress> seen;
  docker::PullProgress last;
  REQUIRE(engine.Pull(
      kRef, [&](const docker::PullProgress& p) { seen.push_back(p); }, &err, &last));
  REQUIRE(seen.size() > 5);
  CHECK(last.layers == 3);
  CHECK(last.layers_done == 3);
  CHECK(last.bytes == 4000500);
  CHECK(last.bytes_total == 4000500);
  CHECK(last.digest == kDigest);
  CHECK(last.Text(kRef) == "pulling " + kRef + ": 3/3 layers, 3.8 MiB of 3.8 MiB");
  bool partial = false;  // progress arrived while layers were still downloading
  for (const auto& p : seen) partial = partial || (p.bytes_total && p.bytes < p.bytes_total);
  CHECK(partial);

  auto img = engine.InspectImage(kRef, &err);
  REQUIRE(img);
  CHECK(img->DigestFor(kRef) == kDigest);
  auto cuda = docker::CudaFromEnv(img->env);
  CHECK(cuda.cuda == "12.2.2");
  CHECK(cuda.cuda_raw == "12.2.2.009");
  CHECK(cuda.driver == "535.104.05");
  CHECK(engine.InspectImage("nvcr.io/nvidia/pytorch@" + kDigest));

  auto remote = engine.RemoteDigest(kRef, &err);
  REQUIRE(remote);
  CHECK(*remote == kDigest);

  auto reqs = fake.Requests();
  bool pulled = false;
  for (const auto& r : reqs)
    if (r["method"] == "POST" && r["path"] == "/v1.47/images/create")
      pulled = r["query"]["fromImage"][0] == "nvcr.io/nvidia/pytorch" && r["query"]["tag"][0] == "23.10-py3";
  CHECK(pulled);
}

TEST_CASE("Engine: errors come back in the engine's words", "[docker][engine]") {
  test::FakeEngine fake(Registry());
  sys::RealUnixHttp http;
  docker::Engine engine(http, fake.socket());
  docker::EngineError err;
  CHECK_FALSE(engine.Pull("nvcr.io/nvidia/pytorch:99.99-py3", {}, &err));
  CHECK(err.status == 404);
  CHECK(err.message ==
        "manifest for nvcr.io/nvidia/pytorch:99.99-py3 not found: manifest unknown: manifest unknown");
  CHECK_FALSE(engine.RemoteDigest("nvcr.io/nvidia/pytorch:99.99-py3", &err));
  CHECK(err.message == "manifest unknown: manifest unknown");

  docker::Engine nowhere(http, fake.dir() + "/absent.sock");
  CHECK_FALSE(nowhere.Version(&err));
  CHECK(err.status == 0);
  CHECK(err.message.find("No such file or directory") != std::string::npos);
}

TEST_CASE("Engine: a GPU container runs, and the classic failures say what they are", "[docker][engine]") {
  const test::TempDir bin_dir;
  const std::string bin = bin_dir.path;
  test::WriteScript(
      bin, "nvidia-smi",
      "[ \"$NVIDIA_VISIBLE_DEVICES\" = void ] && { echo 'nvidia-smi: not found' >&2; exit 127; }\n"
      "echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'; echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)'");
  test::FakeEngine fake(Registry(bin));
  sys::RealUnixHttp http;
  docker::Engine engine(http, fake.socket());
  REQUIRE(engine.Pull(kRef, {}, nullptr));

  docker::ContainerRun run;
  run.image = kRef;
  run.cmd = {"nvidia-smi", "-L"};
  // No toolkit hook: dockerd has no driver for --gpus.
  auto r = engine.Run(run);
  CHECK_FALSE(r.ran);
  CHECK(r.stage == "start");
  CHECK(r.error.message == "could not select device driver \"\" with capabilities: [[gpu]]");

  run.runtime = "nvidia";  // not registered in daemon.json
  r = engine.Run(run);
  CHECK(r.stage == "create");
  CHECK(r.error.status == 400);
  CHECK(r.error.message == "unknown or invalid runtime name: nvidia");

  std::ofstream(fake.daemon_json()) << R"({"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}})";
  test::WriteScript(fake.dir(), "nvidia-container-runtime-hook", "exit 0");
  fake.Hup();
  r = engine.Run(run);
  REQUIRE(r.ran);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n");

  docker::ContainerRun cdi = run;
  cdi.runtime.clear();
  cdi.cdi_devices = {"nvidia.com/gpu=all"};
  r = engine.Run(cdi);  // CDI on by default from 28.3.0, but no spec names the device
  CHECK(r.stage == "start");
  CHECK(r.error.message == "failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all");

  // Every container gpuprep created was removed again.
  size_t created = 0, deleted = 0;
  for (const auto& q : fake.Requests()) {
    created += q["method"] == "POST" && q["path"] == "/v1.47/containers/create";
    deleted += q["method"] == "DELETE";
  }
  CHECK(created == 4);
  CHECK(deleted == 3);  // the create that failed left nothing to remove
}

TEST_CASE("Demultiplex splits Docker's framed log stream", "[docker][engine]") {
  std::string body;
  auto frame = [&](char stream, const std::string& data) {
    body += std::string{stream, 0, 0, 0};
    body += std::string{0, 0, 0, static_cast<char>(data.size())};
    body += data;
  };
  frame(1, "out1\n");
  frame(2, "err\n");
  frame(1, "out2\n");
  std::string out, err;
  docker::Demultiplex(body, out, err);
  CHECK(out == "out1\nout2\n");
  CHECK(err == "err\n");
  out.clear();
  docker::Demultiplex("plain tty text\n", out, err);
  CHECK(out == "plain tty text\n");
}

namespace {
// An engine answering every call with one canned body (status 200), streamed to on_data when asked.
class CannedEngine : public sys::UnixHttp {
 public:
  explicit CannedEngine(std::string body) : body_(std::move(body)) {}
  sys::HttpResponse Get(const std::string&, const std::string&, std::chrono::milliseconds) override {
    sys::HttpResponse r;
    r.status = 200;
    r.body = body_;
    return r;
  }
  sys::HttpResponse Request(const std::string& socket, const sys::UnixRequest& req) override {
    sys::HttpResponse r = Get(socket, req.path, req.timeout);
    if (req.on_data) req.on_data(r.body);
    return r;
  }

 private:
  std::string body_;
};
}  // namespace

TEST_CASE("Engine: wrongly typed answers are answers without the value, not internal errors",
          "[docker][engine]") {
  CannedEngine typed(R"({"Id": 5, "Version": 7, "ApiVersion": [1], "RepoDigests": "x", "Config": {"Env": 3},
    "Descriptor": {"digest": 9}, "status": 5, "id": 6, "message": 4})");
  docker::Engine engine(typed, "/none");
  docker::EngineError err;
  std::optional<docker::EngineVersion> v;
  REQUIRE_NOTHROW(v = engine.Version(&err));
  REQUIRE(v);
  CHECK(v->version.empty());
  CHECK(v->api_version.empty());
  std::optional<docker::ImageDetails> d;
  REQUIRE_NOTHROW(d = engine.InspectImage(kRef, &err));
  REQUIRE(d);
  CHECK(d->id.empty());
  CHECK_NOTHROW(engine.RemoteDigest(kRef, &err));
  CHECK_NOTHROW(engine.Pull(kRef, nullptr, &err, nullptr));
  docker::ContainerRun run;
  run.image = kRef;
  docker::ContainerResult res;
  REQUIRE_NOTHROW(res = engine.Run(run));
  CHECK(res.stage == "create");
}

TEST_CASE("Demultiplexer reads Docker's framed stream piece by piece", "[docker][engine]") {
  std::string body;
  auto frame = [&](char stream, const std::string& data) {
    body += std::string{stream, 0, 0, 0};
    body += std::string{0, 0, static_cast<char>(data.size() >> 8), static_cast<char>(data.size() & 0xff)};
    body += data;
  };
  frame(1, "{\"record\":\"progress\"}\n");
  frame(2, "warning: slow\n");
  frame(1, std::string(300, 'x'));
  frame(1, "");
  frame(1, "end\n");
  SECTION("split at every byte: the same text on the same streams") {
    docker::Demultiplexer d;
    std::string out, err;
    for (char c : body)
      REQUIRE(d.Feed(std::string_view(&c, 1), [&](int fd, std::string_view s) {
        (fd == 1 ? out : err) += std::string(s);
        return true;
      }));
    CHECK(out == "{\"record\":\"progress\"}\n" + std::string(300, 'x') + "end\n");
    CHECK(err == "warning: slow\n");
  }
  SECTION("a handler's false stops it") {
    docker::Demultiplexer d;
    int calls = 0;
    CHECK_FALSE(d.Feed(body, [&](int, std::string_view) { return ++calls < 2; }));
    CHECK(calls == 2);
  }
  SECTION("a stream without frame headers (a TTY) is refused, not misread") {
    docker::Demultiplexer d;
    CHECK_FALSE(d.Feed("plain text from a tty\n", [](int, std::string_view) { return true; }));
    CHECK(d.error.find("not Docker's multiplexed stream") != std::string::npos);
  }
}
