// A thread that runs one task at a time for a caller who will not wait past a deadline. Used for calls
// into libraries that can hang (NVML under load: github.com/microsoft/pai/issues/842,
// github.com/NVIDIA/dcgm-exporter/issues/227): the caller gets "late" at the deadline and goes on; the task
// keeps running on the worker, which takes no new task until it returns ("busy"). The worker's state is
// shared with the thread, so a worker stuck in a call can be abandoned (Abandon) and the process can exit
// without joining it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace gp::sys {

class DeadlineWorker {
 public:
  enum class Outcome {
    kDone,  // the task ran to completion before the deadline
    kLate,  // the deadline passed; the task is still running and the worker stays busy until it returns
    kBusy,  // an earlier late task has not returned yet: this task was not started
  };

  DeadlineWorker();
  // Joins the thread when it is idle; when a task is still running, detaches it (see Abandon).
  ~DeadlineWorker();
  DeadlineWorker(const DeadlineWorker&) = delete;
  DeadlineWorker& operator=(const DeadlineWorker&) = delete;

  // Starts `task` on the worker; false (and nothing started) while an earlier task is still running. The
  // task must only touch state that outlives the worker's thread (captured by value or shared).
  bool Start(std::function<void()> task);
  // Waits until the task Start began has returned (true) or `deadline` passes (false: it keeps running).
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);
  // Start, then WaitUntil.
  Outcome Run(std::function<void()> task, std::chrono::steady_clock::time_point deadline);
  // True while a late task is still running.
  bool Busy() const;
  // Leaves the thread behind without joining it (a call that never returns); the destructor then does
  // not wait either.
  void Abandon();

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::function<void()> task;  // set by Run, cleared by the worker when it starts the task
    bool running = false;        // a task is in progress
    bool stop = false;
    unsigned long long started = 0;   // tasks handed to the worker so far
    unsigned long long finished = 0;  // tasks completed so far
  };
  static void Loop(const std::shared_ptr<State>& s);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace gp::sys
