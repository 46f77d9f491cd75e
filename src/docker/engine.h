// The Docker Engine API calls gpuprep makes, over the unix socket (sys::UnixHttp; no libcurl, nothing
// heavy: doctor may use it). Paths and bodies follow Docker's API reference: GET /_ping, /version, /info,
// POST /images/create (streamed JSON progress), GET /images/{name}/json, GET /distribution/{name}/json,
// POST /containers/create, POST /containers/{id}/start, POST /containers/{id}/wait,
// GET /containers/{id}/logs (multiplexed stdout/stderr), POST /containers/{id}/attach (the same stream,
// as it is written), GET /containers/json (by label), DELETE /containers/{id}.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sys/http.h"

namespace gp::docker {

// The result of one call: ok, or the engine's own message ({"message": ...}) or the transport error.
struct EngineError {
  int status = 0;       // HTTP status; 0 when the engine was not reached
  std::string message;  // "No such image: ...", "connect /var/run/docker.sock: No such file or directory"
};

struct EngineVersion {
  std::string version;      // "28.3.2"
  std::string api_version;  // "1.51"
};

struct ImageDetails {
  std::string id;                         // "sha256:..." (the config digest)
  std::vector<std::string> repo_digests;  // "nvcr.io/nvidia/pytorch@sha256:..."
  std::vector<std::string> env;           // Config.Env
  // The manifest digest recorded for `name` (a RepoDigests entry of the same repository), "" when none.
  std::string DigestFor(const std::string& name) const;
  // NGC's PyTorch images (and PyTorch's own) set PYTORCH_VERSION or NVIDIA_PYTORCH_VERSION in their config.
  bool CarriesPyTorch() const;
};

struct PullProgress {
  size_t layers = 0, layers_done = 0;
  uint64_t bytes = 0, bytes_total = 0;  // summed over layers that reported a size
  std::string status;                   // the last status line ("Digest: sha256:...", "Pulling fs layer")
  std::string digest;                   // from "Digest: sha256:..."
  std::string Text(const std::string& ref) const;  // "pulling REF: 3/12 layers, 1.2 GiB of 8.9 GiB"
};

struct ContainerRun {
  std::string image;
  std::vector<std::string> cmd;
  std::string runtime;                   // HostConfig.Runtime ("" = the engine's default)
  bool gpus_all = true;                  // DeviceRequests: --gpus all (driver "", capabilities [[gpu]])
  std::vector<std::string> cdi_devices;  // DeviceRequests driver "cdi" (--device nvidia.com/gpu=all) instead
  bool ipc_host = true;
  std::chrono::seconds timeout{300};
  std::map<std::string, std::string> labels{{"gpuprep", "verify"}};
  bool auto_remove = false;                // HostConfig.AutoRemove: the engine removes it when it exits
  std::map<std::string, std::string> env;  // added to the image's environment
  // For a job across nodes (RDMA): the host's network, devices at their host paths, memlock without limit
  // (the RDMA memory registrations) and added capabilities (IPC_LOCK).
  bool network_host = false;         // HostConfig.NetworkMode "host"
  std::vector<std::string> devices;  // HostConfig.Devices, e.g. /dev/infiniband, read-write-mknod
  bool memlock_unlimited = false;    // HostConfig.Ulimits memlock -1/-1
  std::vector<std::string> cap_add;  // HostConfig.CapAdd
};

// A container whose output is read as it is written: attached before it starts, so nothing is missed.
struct StreamedRun {
  // Each piece of output as it arrives (fd 1 stdout, 2 stderr; never split inside a frame header).
  // false: stop the container now.
  std::function<bool(int fd, std::string_view chunk)> on_output;
  std::function<bool()> keep_running;  // asked at least every 200 ms; false: stop the container now
  std::chrono::seconds silence{600};   // the longest the output may be silent before it is stopped
};

struct StreamedResult {
  std::string id;        // the container's id once created
  bool started = false;  // it ran
  bool stopped = false;  // gpuprep stopped it (on_output or keep_running said so, or the silence)
  int exit_code = -1;    // its status when it ended on its own; -1 when unknown or stopped
  bool removed = false;  // gone from the engine afterwards (removed by gpuprep or by AutoRemove)
  std::string stage;     // where it failed: "create", "attach", "start"
  EngineError error;
};

// Docker's multiplexed stream read piece by piece: each frame's 8-byte header (stream, 0, 0, 0, size
// big-endian) may arrive split across reads; the payload is handed on as it comes.
class Demultiplexer {
 public:
  // false when a handler said stop or the stream is not multiplexed (`error` says so).
  bool Feed(std::string_view data, const std::function<bool(int fd, std::string_view chunk)>& out);
  std::string error;

 private:
  unsigned char header_[8] = {};
  size_t header_len_ = 0;
  uint64_t left_ = 0;  // payload bytes of the current frame still to come
  int fd_ = 1;
};

struct ContainerResult {
  bool ran = false;  // created, started and waited for
  int exit_code = -1;
  std::string out, err;  // the logs, demultiplexed
  std::string stage;     // where it failed: "create", "start", "wait", "logs"
  EngineError error;
};

class Engine {
 public:
  // `api_version` ("1.51"), when the caller already read /version, spares the round trip Api() makes
  // otherwise; "" (or anything but digits and dots) means ask.
  Engine(sys::UnixHttp& http, std::string socket, const std::string& api_version = "");

  std::optional<EngineVersion> Version(EngineError* err = nullptr);
  // GET /images/{name}/json; nullopt with err->status 404 when the image is not there.
  std::optional<ImageDetails> InspectImage(const std::string& ref, EngineError* err = nullptr);
  // GET /distribution/{name}/json: the registry's manifest digest, without pulling.
  std::optional<std::string> RemoteDigest(const std::string& ref, EngineError* err = nullptr);
  // POST /images/create?fromImage=NAME&tag=TAG|DIGEST; `progress` is called as the stream arrives. An
  // error inside the stream (HTTP 200 with {"error": ...}) is an error.
  bool Pull(const std::string& ref, const std::function<void(const PullProgress&)>& progress,
            EngineError* err, PullProgress* last = nullptr);
  // Create, start, wait, read the logs, remove.
  ContainerResult Run(const ContainerRun& run);
  // Create, attach, start, stream its output until it ends or is stopped; a stopped container is killed
  // and removed, and so is one that ended (unless AutoRemove did it). Its status comes from a wait
  // registered before it starts.
  StreamedResult RunStreamed(const ContainerRun& run, const StreamedRun& s);
  // The containers (running or not) carrying label `key`: each one's id and that label's value.
  std::optional<std::vector<std::pair<std::string, std::string>>> ContainersLabelled(
      const std::string& key, EngineError* err = nullptr);
  // DELETE /containers/{id}?force=1: killed if running, then removed; a container already gone is removed.
  bool RemoveContainer(const std::string& id, EngineError* err = nullptr);

 private:
  sys::HttpResponse Call(const std::string& method, const std::string& path, const std::string& body,
                         std::chrono::milliseconds timeout,
                         std::function<void(std::string_view)> on_data = {});
  sys::HttpResponse Send(sys::UnixRequest req);  // req.path without the API prefix
  std::string CreateBody(const ContainerRun& run, bool attach) const;
  std::string Api();  // "/v1.47": the engine's own API version (from /version, asked once)

  sys::UnixHttp& http_;
  std::string socket_;
  std::string api_;
};

// "engine message" from an error body; the raw body when it is not Docker's {"message": ...}.
std::string EngineMessage(const sys::HttpResponse& r);
// Docker's multiplexed log stream (8-byte frame headers: stream, 0, 0, 0, big-endian size) -> out, err.
// A body without frame headers (a TTY container) is all stdout.
void Demultiplex(const std::string& body, std::string& out, std::string& err);
// Percent-encoding for a query value.
std::string QueryEscape(const std::string& s);

}  // namespace gp::docker
