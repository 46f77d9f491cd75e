// The container runner (accept/run_container.h) and the Engine API sequence under it
// (docker::Engine::RunStreamed), against a scripted engine: the wait registered before the start, the
// attach before the start, the output demultiplexed into the stream, and the removal on each path (the
// engine's AutoRemove after a run that ended alone; gpuprep's DELETE after a stop or a failure). The real
// engine runs the same sequence in the simulated server's scenario.
#include "accept/run_container.h"

#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "accept/stream.h"
#include "docker/engine.h"
#include "sys/http.h"

using namespace gp;

namespace {

const char* kContainerId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string ContainerFrame(char stream, const std::string& data) {
  std::string f{stream, 0, 0, 0};
  const size_t n = data.size();
  f += std::string{static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xff),
                   static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
  return f + data;
}

const char* kContainerRun =
    "{\"record\":\"progress\",\"phase\":\"matmul_bf16\",\"state\":\"start\",\"budget_s\":3}\n"
    "{\"record\":\"phase\",\"phase\":\"matmul_bf16\",\"gpu\":0,\"tflops\":790.1,\"m\":2048,\"n\":2048,"
    "\"k\":13312,\"duration_s\":0.01}\n"
    "{\"record\":\"progress\",\"phase\":\"matmul_bf16\",\"state\":\"done\"}\n"
    "{\"record\":\"done\"}\n";

// A Docker engine played from a script: the container prints `output` (already framed) when attached and
// started, then ends with `status` unless `hang` (then only a DELETE ends it).
class ScriptedEngine : public sys::UnixHttp {
 public:
  std::string output;
  int status = 0;
  bool hang = false;
  std::string labelled = "[]";

  sys::HttpResponse Get(const std::string&, const std::string& path, std::chrono::milliseconds) override {
    Log("GET " + path);
    return Answer(200, R"({"Version":"28.3.2","ApiVersion":"1.51"})");
  }
  sys::HttpResponse Request(const std::string&, const sys::UnixRequest& req) override {
    const std::string& p = req.path;
    Log(req.method + " " + p);
    if (p.find("/containers/create") != std::string::npos) {
      create_body = req.body;
      return Answer(201, std::string("{\"Id\":\"") + kContainerId + "\"}");
    }
    if (p.find("/wait?") != std::string::npos) {
      if (req.on_head) req.on_head(200);
      std::unique_lock<std::mutex> lock(mu_);
      while (!ended_ && (!req.keep_running || req.keep_running()))
        cv_.wait_for(lock, std::chrono::milliseconds(20));
      if (!ended_) {
        sys::HttpResponse r;
        r.stopped = true;
        r.error = "stopped by gpuprep";
        return r;
      }
      return Answer(200, "{\"StatusCode\":" + std::to_string(status) + "}");
    }
    if (p.find("/attach?") != std::string::npos) {
      if (req.on_head) req.on_head(200);
      if (!Started()) return Answer(200, "");
      for (size_t i = 0; i < output.size(); i += 5) {  // pieces that split frames
        if (req.keep_running && !req.keep_running()) return Stopped();
        req.on_data(std::string_view(output).substr(i, 5));
      }
      while (hang) {
        if (req.keep_running && !req.keep_running()) return Stopped();
        // A container that never ends, in this process: it checks gpuprep's stop every 10 ms.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      End();
      return Answer(200, "");
    }
    if (p.find("/start") != std::string::npos) {
      std::lock_guard<std::mutex> lock(mu_);
      started_ = true;
      return Answer(204, "");
    }
    if (req.method == "DELETE") {
      End();
      return Answer(204, "");
    }
    if (p.find("/containers/json") != std::string::npos) return Answer(200, labelled);
    return Answer(404, R"({"message":"not scripted"})");
  }

  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::string create_body;

 private:
  static sys::HttpResponse Answer(int status, std::string body) {
    sys::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  }
  sys::HttpResponse Stopped() {
    sys::HttpResponse r;
    r.status = 200;
    r.stopped = true;
    r.error = "stopped by gpuprep";
    return r;
  }
  bool Started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    cv_.notify_all();
  }
  void Log(const std::string& call) {
    std::lock_guard<std::mutex> lock(mu_);
    // The API prefix and the id are the same in every call: left out, so the order reads plainly.
    std::string c = call;
    if (c.find("/v1.51") != std::string::npos) c.erase(c.find("/v1.51"), 6);
    if (c.find(kContainerId) != std::string::npos) c.replace(c.find(kContainerId), 64, "ID");
    calls_.push_back(c);
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, ended_ = false;
  std::vector<std::string> calls_;
};

docker::ContainerRun MeasureRun() {
  docker::ContainerRun r;
  r.image = "nvcr.io/nvidia/pytorch:25.01-py3";
  r.cmd = {"python", "-c", "PROGRAM", "--device", "cuda"};
  return r;
}

bool Called(const std::vector<std::string>& calls, const std::string& what) {
  for (const auto& c : calls)
    if (c == what) return true;
  return false;
}

}  // namespace

TEST_CASE("RunInContainer: a run that ends alone is read whole and left to AutoRemove", "[accept][docker]") {
  ScriptedEngine http;
  http.output = ContainerFrame(1, kContainerRun) + ContainerFrame(2, "a warning\n");
  docker::Engine engine(http, "/run/docker.sock", "1.51");
  accept::ProgramStream stream(1, true);
  const auto end =
      accept::RunInContainer(engine, MeasureRun(), "4242-1764800000", stream, std::chrono::seconds(60), {});
  CHECK(end.started);
  CHECK_FALSE(end.stopped);
  CHECK(end.exit_code == 0);
  CHECK(end.left.empty());
  CHECK(stream.Done());
  CHECK(stream.PhaseLines().size() == 1);
  CHECK(stream.Findings().empty());
  const auto calls = http.Calls();
  // The wait and the attach come before the start, so neither the end nor the first line can be missed.
  REQUIRE(calls.size() == 4);
  CHECK(calls[0] == "POST /containers/create");
  CHECK(calls[1] == "POST /containers/ID/wait?condition=removed");
  CHECK(calls[2] == "POST /containers/ID/attach?stream=1&stdout=1&stderr=1");
  CHECK(calls[3] == "POST /containers/ID/start");
  CHECK(http.create_body.find("\"AutoRemove\":true") != std::string::npos);
  CHECK(http.create_body.find("\"gpuprep.accept\":\"4242-1764800000\"") != std::string::npos);
  CHECK(http.create_body.find("\"AttachStdout\":true") != std::string::npos);
}

TEST_CASE("RunInContainer: a flood is stopped and the container removed", "[accept][docker]") {
  ScriptedEngine http;
  http.hang = true;  // it would print forever: only gpuprep's stop ends it
  http.output = ContainerFrame(1, std::string(kContainerRun).substr(0, 80)) +
                ContainerFrame(1, std::string(accept::kProgramLineMax + 10, 'x'));
  docker::Engine engine(http, "/run/docker.sock", "1.51");
  accept::ProgramStream stream(1, true);
  const auto end = accept::RunInContainer(engine, MeasureRun(), "1-1", stream, std::chrono::seconds(60), {});
  CHECK(end.started);
  CHECK(end.stopped);
  CHECK(end.exit_code == -1);
  CHECK(end.left.empty());
  CHECK_FALSE(stream.Findings().empty());
  CHECK(Called(http.Calls(), "DELETE /containers/ID?force=1"));
}

TEST_CASE("RunInContainer: Ctrl-C stops a silent container and removes it", "[accept][docker]") {
  ScriptedEngine http;
  http.hang = true;
  docker::Engine engine(http, "/run/docker.sock", "1.51");
  accept::ProgramStream stream(1, true);
  int asked = 0;
  const auto end = accept::RunInContainer(engine, MeasureRun(), "1-1", stream, std::chrono::seconds(60),
                                          [&] { return ++asked > 3; });
  CHECK(end.interrupted);
  CHECK(end.stopped);
  CHECK(Called(http.Calls(), "DELETE /containers/ID?force=1"));
}

TEST_CASE("ReapStale removes what a gone gpuprep left, and stops for a live one", "[accept][docker]") {
  ScriptedEngine http;
  docker::Engine engine(http, "/run/docker.sock", "1.51");
  http.labelled =
      std::string("[{\"Id\":\"") + kContainerId + "\",\"Labels\":{\"gpuprep.accept\":\"999-17\"}}]";
  auto gone = accept::ReapStale(engine, [](long) { return false; });
  CHECK(gone.removed == std::vector<std::string>{kContainerId});
  CHECK(gone.busy.empty());
  CHECK(Called(http.Calls(), "DELETE /containers/ID?force=1"));
  ScriptedEngine http2;
  docker::Engine engine2(http2, "/run/docker.sock", "1.51");
  http2.labelled = http.labelled;
  auto live = accept::ReapStale(engine2, [](long pid) { return pid == 999; });
  CHECK(live.removed.empty());
  CHECK(live.busy.find("pid 999") != std::string::npos);
  CHECK_FALSE(Called(http2.Calls(), "DELETE /containers/ID?force=1"));
  // A label that names no pid is a container no live run can own: removed.
  CHECK(accept::LabelPid("x-1") == 0);
  CHECK(accept::LabelPid("4242-1764800000") == 4242);
}

TEST_CASE(
    "RunInContainer: the check across nodes gets the host's network, the RDMA devices, memlock and IPC_LOCK",
    "[accept][docker]") {
  ScriptedEngine http;
  http.output = ContainerFrame(1, kContainerRun);
  docker::Engine engine(http, "/run/docker.sock", "1.51");
  accept::ProgramStream stream(1, true);
  docker::ContainerRun run = MeasureRun();
  run.network_host = true;
  run.devices = {"/dev/infiniband"};
  run.memlock_unlimited = true;
  run.cap_add = {"IPC_LOCK"};
  const auto end = accept::RunInContainer(engine, run, "1-1", stream, std::chrono::seconds(60), {});
  CHECK(end.started);
  const auto body = nlohmann::json::parse(http.create_body);
  const auto& host = body.at("HostConfig");
  CHECK(host.at("NetworkMode") == "host");
  CHECK(host.at("Devices") ==
        nlohmann::json::parse(R"([{"PathOnHost":"/dev/infiniband","PathInContainer":"/dev/infiniband",)"
                              R"("CgroupPermissions":"rwm"}])"));
  CHECK(host.at("Ulimits") == nlohmann::json::parse(R"([{"Name":"memlock","Soft":-1,"Hard":-1}])"));
  CHECK(host.at("CapAdd") == nlohmann::json::parse(R"(["IPC_LOCK"])"));

  ScriptedEngine plain;  // one server: none of them
  plain.output = ContainerFrame(1, kContainerRun);
  docker::Engine engine2(plain, "/run/docker.sock", "1.51");
  accept::ProgramStream stream2(1, true);
  accept::RunInContainer(engine2, MeasureRun(), "1-1", stream2, std::chrono::seconds(60), {});
  const auto host2 = nlohmann::json::parse(plain.create_body).at("HostConfig");
  CHECK_FALSE(host2.contains("NetworkMode"));
  CHECK_FALSE(host2.contains("Devices"));
  CHECK_FALSE(host2.contains("CapAdd"));
}
