// Ctrl-C and SIGTERM for a long-running verb (watch): while a StopSignal lives, SIGINT and SIGTERM set a
// flag and wake WaitUntil instead of killing the process, so the verb can print what it has and exit on
// its own. A second signal of the same kind gets the default action (the handler resets itself), so a
// user can still kill a run that does not stop. The previous handlers come back when it is destroyed.
#pragma once
#include <chrono>

namespace gp::sys {

class Waiter {
 public:
  virtual ~Waiter() = default;
  // Sleeps until `deadline` or until a stop is requested, whichever comes first; true when stopped.
  virtual bool WaitUntil(std::chrono::steady_clock::time_point deadline) = 0;
  virtual bool Stopped() const = 0;
};

class StopSignal : public Waiter {
 public:
  StopSignal();  // installs the handlers (one StopSignal at a time per process)
  ~StopSignal() override;
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  bool WaitUntil(std::chrono::steady_clock::time_point deadline) override;
  bool Stopped() const override;
};

}  // namespace gp::sys
