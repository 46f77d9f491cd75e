#include "sys/deadline_worker.h"

#include <utility>

namespace gp::sys {

DeadlineWorker::DeadlineWorker() : state_(std::make_shared<State>()) {
  thread_ = std::thread([s = state_] { Loop(s); });
}

DeadlineWorker::~DeadlineWorker() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  if (!thread_.joinable()) return;
  // A call that has not returned: never wait for it. On the worker's own thread (its task held the last
  // reference to the owner) joining would wait for itself.
  if (Busy() || thread_.get_id() == std::this_thread::get_id())
    thread_.detach();
  else
    thread_.join();
}

void DeadlineWorker::Loop(const std::shared_ptr<State>& s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || s->task; });
    if (!s->task) return;  // stop with nothing queued
    std::function<void()> task = std::move(s->task);
    s->task = nullptr;
    s->running = true;
    lock.unlock();
    task();
    task = nullptr;  // release what the task holds before anyone is told it finished
    lock.lock();
    s->running = false;
    ++s->finished;
    s->cv.notify_all();
    if (s->stop) return;
  }
}

bool DeadlineWorker::Start(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->running || state_->task || state_->stop) return false;
    state_->task = std::move(task);
    ++state_->started;
  }
  state_->cv.notify_all();
  return true;
}

bool DeadlineWorker::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(state_->mu);
  const unsigned long long target = state_->started;
  return state_->cv.wait_until(lock, deadline, [&] { return state_->finished >= target; });
}

DeadlineWorker::Outcome DeadlineWorker::Run(std::function<void()> task,
                                            std::chrono::steady_clock::time_point deadline) {
  if (!Start(std::move(task))) return Outcome::kBusy;
  return WaitUntil(deadline) ? Outcome::kDone : Outcome::kLate;
}

bool DeadlineWorker::Busy() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->running || static_cast<bool>(state_->task);
}

void DeadlineWorker::Abandon() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  if (thread_.joinable()) thread_.detach();
}

}  // namespace gp::sys
