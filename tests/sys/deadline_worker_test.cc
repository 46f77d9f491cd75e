// DeadlineWorker: a task that returns in time, one that does not (late, then busy until it returns), and
// a worker abandoned inside a task that never returns while the test goes on.
#include "sys/deadline_worker.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

using namespace gp::sys;
using namespace std::chrono_literals;

TEST_CASE("DeadlineWorker: done, late, busy, then free again", "[sys][worker]") {
  DeadlineWorker w;
  int x = 0;
  CHECK(w.Run([&x] { x = 1; }, std::chrono::steady_clock::now() + 1s) == DeadlineWorker::Outcome::kDone);
  CHECK(x == 1);
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(w.Run(
            [release] {
              while (!*release) std::this_thread::sleep_for(1ms);
            },
            t0 + 50ms) == DeadlineWorker::Outcome::kLate);
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  CHECK(w.Busy());
  CHECK(w.Run([] {}, std::chrono::steady_clock::now() + 10ms) == DeadlineWorker::Outcome::kBusy);
  *release = true;
  for (int i = 0; i < 200 && w.Busy(); ++i) std::this_thread::sleep_for(5ms);
  CHECK_FALSE(w.Busy());
  CHECK(w.Run([&x] { x = 2; }, std::chrono::steady_clock::now() + 1s) == DeadlineWorker::Outcome::kDone);
  CHECK(x == 2);
}

TEST_CASE("DeadlineWorker: destroyed while a task is stuck, without waiting for it", "[sys][worker]") {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto t0 = std::chrono::steady_clock::now();
  {
    DeadlineWorker w;
    CHECK(w.Run(
              [release] {
                while (!*release) std::this_thread::sleep_for(1ms);
              },
              t0 + 20ms) == DeadlineWorker::Outcome::kLate);
  }  // ~DeadlineWorker detaches
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  *release = true;  // let the detached thread finish before the test binary exits
  std::this_thread::sleep_for(20ms);
}
