// The Engine API calls for a container whose output is streamed (accept's measurement program): attach,
// then start, a wait registered before the start in a thread of its own, and the removal on every path.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "docker/engine.h"
#include "docker/engine_internal.h"

namespace gp::docker {

using nlohmann::json;

bool Demultiplexer::Feed(std::string_view data,
                         const std::function<bool(int fd, std::string_view chunk)>& out) {
  while (!data.empty()) {
    if (left_ == 0) {
      const size_t take = std::min(sizeof header_ - header_len_, data.size());
      std::memcpy(header_ + header_len_, data.data(), take);
      header_len_ += take;
      data.remove_prefix(take);
      if (header_len_ < sizeof header_) return true;
      header_len_ = 0;
      if (header_[0] > 2 || header_[1] != 0 || header_[2] != 0 || header_[3] != 0) {
        error = "the container's output is not Docker's multiplexed stream";
        return false;
      }
      fd_ = header_[0] == 2 ? 2 : 1;  // 0 (stdin, echoed only with a TTY) counts as stdout
      left_ = (uint64_t{header_[4]} << 24) | (uint64_t{header_[5]} << 16) | (uint64_t{header_[6]} << 8) |
              uint64_t{header_[7]};
      continue;
    }
    const size_t take = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
    left_ -= take;
    if (out && !out(fd_, data.substr(0, take))) return false;
    data.remove_prefix(take);
  }
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;

// The wait for a container's end, sent before it starts (the engine writes the answer's head once the
// wait is registered) and answered when it exits (or, with AutoRemove, once it is removed).
class Waiter {
 public:
  Waiter(const std::function<sys::HttpResponse(sys::UnixRequest)>& send, const std::string& id, bool removed,
         std::chrono::seconds limit) {
    thread_ = std::thread([this, send, id, removed, limit] {
      sys::UnixRequest req;
      req.method = "POST";
      req.path = "/containers/" + id + "/wait?condition=" + (removed ? "removed" : "next-exit");
      req.timeout = limit;
      req.on_head = [this](int) { Signal(); };
      req.keep_running = [this] { return Clock::now().time_since_epoch().count() < give_up_.load(); };
      sys::HttpResponse r = send(req);
      std::lock_guard<std::mutex> lock(mu_);
      answer_ = std::move(r);
      registered_ = true;
      cv_.notify_all();
    });
  }
  ~Waiter() { Finish(std::chrono::seconds(0)); }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Until the engine registered the wait (or it failed), at most `limit`.
  void AwaitRegistered(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, limit, [this] { return registered_; });
  }
  // Gives the answer `grace` more, then the thread is joined; the answer (an error when none came).
  sys::HttpResponse Finish(std::chrono::seconds grace) {
    if (!thread_.joinable()) return answer_;
    const auto until = (Clock::now() + grace).time_since_epoch().count();
    if (until < give_up_.load()) give_up_.store(until);
    thread_.join();
    return answer_;
  }

 private:
  void Signal() {
    std::lock_guard<std::mutex> lock(mu_);
    registered_ = true;
    cv_.notify_all();
  }

  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool registered_ = false;
  std::atomic<Clock::rep> give_up_{Clock::time_point::max().time_since_epoch().count()};
  sys::HttpResponse answer_;
};

// Notes how the attach ended when nothing failed before it: the container never started (the attach's
// error), or its output was not Docker's multiplexed stream.
void NoteAttachEnd(StreamedResult& res, const sys::HttpResponse& attached, const Demultiplexer& demux) {
  if (res.stage.empty() && !res.started) {
    res.stage = "attach";
    res.error = detail::ErrorOf(attached);
  }
  if (!demux.error.empty() && res.stage.empty()) {
    res.stage = "attach";
    res.error = {attached.status, demux.error};
  }
}

// Notes what the wait answered for a container that ended on its own: its exit code, and with AutoRemove
// that it is gone.
void NoteWaitAnswer(StreamedResult& res, const sys::HttpResponse& waited, bool auto_remove) {
  const auto wj = json::parse(waited.body, nullptr, false);
  if (wj.is_object() && wj.contains("StatusCode") && wj["StatusCode"].is_number_integer())
    res.exit_code = wj["StatusCode"].get<int>();
  if (auto_remove) res.removed = true;  // condition=removed answered: it is gone
}

}  // namespace

StreamedResult Engine::RunStreamed(const ContainerRun& run, const StreamedRun& s) {
  StreamedResult res;
  Api();  // asked here, once, before the wait's thread shares this client
  auto created = Call("POST", "/containers/create", CreateBody(run, true), std::chrono::seconds(60));
  if (!created.ok()) {
    res.stage = "create";
    res.error = detail::ErrorOf(created);
    return res;
  }
  const std::string id = detail::Text(json::parse(created.body, nullptr, false), "Id");
  if (!detail::ValidContainerId(id)) {
    res.stage = "create";
    res.error = {created.status, "container create: no container Id in the answer"};
    return res;
  }
  res.id = id;
  Waiter waiter([this](sys::UnixRequest r) { return Send(std::move(r)); }, id, run.auto_remove,
                run.timeout + std::chrono::seconds(120));
  waiter.AwaitRegistered(std::chrono::seconds(10));

  bool stop = false;
  Demultiplexer demux;
  sys::UnixRequest attach;
  attach.method = "POST";
  attach.path = "/containers/" + id + "/attach?stream=1&stdout=1&stderr=1";
  attach.timeout = s.silence;
  attach.on_head = [&](int status) {
    if (status < 200 || status > 299) return;
    auto started = Call("POST", "/containers/" + id + "/start", "", std::chrono::seconds(120));
    if (started.ok()) {
      res.started = true;
    } else {
      res.stage = "start";
      res.error = detail::ErrorOf(started);
    }
  };
  attach.on_data = [&](std::string_view d) {
    if (!stop && res.started && !demux.Feed(d, s.on_output)) stop = true;
  };
  attach.keep_running = [&] { return !stop && res.stage.empty() && (!s.keep_running || s.keep_running()); };
  const sys::HttpResponse attached = Send(attach);
  NoteAttachEnd(res, attached, demux);
  // Stopped by gpuprep: asked to (a bound, a deadline, Ctrl-C), or the output was silent too long.
  res.stopped = res.started && res.stage.empty() && (stop || attached.stopped || !attached.error.empty());
  const bool ended_alone = res.started && res.stage.empty() && !res.stopped;
  if (!ended_alone || !run.auto_remove) res.removed = RemoveContainer(id);
  const sys::HttpResponse waited = waiter.Finish(std::chrono::seconds(ended_alone ? 30 : 10));
  if (ended_alone && waited.ok()) NoteWaitAnswer(res, waited, run.auto_remove);
  if (!res.removed) res.removed = RemoveContainer(id);
  return res;
}

std::optional<std::vector<std::pair<std::string, std::string>>> Engine::ContainersLabelled(
    const std::string& key, EngineError* err) {
  const std::string filters = json{{"label", json::array({key})}}.dump();
  auto r = Call("GET", "/containers/json?all=1&filters=" + QueryEscape(filters), "", detail::kQuick);
  auto fail = [&](EngineError e) {
    if (err) *err = std::move(e);
    return std::nullopt;
  };
  if (!r.ok()) return fail(detail::ErrorOf(r));
  const auto j = json::parse(r.body, nullptr, false);
  if (!j.is_array()) return fail({r.status, "container list: not a JSON array"});
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : j) {
    const std::string id = detail::Text(c, "Id");
    if (!detail::ValidContainerId(id)) continue;
    std::string value;
    if (c.is_object())
      if (auto l = c.find("Labels"); l != c.end()) value = detail::Text(*l, key.c_str());
    out.emplace_back(id, value);
  }
  return out;
}

bool Engine::RemoveContainer(const std::string& id, EngineError* err) {
  if (!detail::ValidContainerId(id)) {
    if (err) *err = {0, "not a container id"};
    return false;
  }
  auto r = Call("DELETE", "/containers/" + id + "?force=1", "", std::chrono::seconds(30));
  // 404: already gone (AutoRemove was first); 409: its removal is already under way.
  if (r.ok() || r.status == 404 || r.status == 409) return true;
  if (err) *err = detail::ErrorOf(r);
  return false;
}

}  // namespace gp::docker
