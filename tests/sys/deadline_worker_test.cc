// DeadlineWorker: a task that returns in time, one that does not (late, then busy until it returns), and
// a worker abandoned inside a task that never returns while the test goes on.
#include "sys/deadline_worker.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>

using namespace gp::sys;
using namespace std::chrono_literals;

TEST_CASE("DeadlineWorker: done, late, busy, then free again", "[sys][worker]") {
  DeadlineWorker w;
  int x = 0;
  CHECK(w.Run([&x] { x = 1; }, std::chrono::steady_clock::now() + 1s) == DeadlineWorker::Outcome::kDone);
  CHECK(x == 1);
  // A latch, no sleeps: the task waits for `release`; the worker's own WaitUntil says when it has returned.
  auto release = std::make_shared<std::promise<void>>();
  auto t0 = std::chrono::steady_clock::now();
  CHECK(w.Run([gate = release->get_future().share()] { gate.wait(); }, t0 + 50ms) ==
        DeadlineWorker::Outcome::kLate);
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  CHECK(w.Busy());
  CHECK(w.Run([] {}, std::chrono::steady_clock::now() + 10ms) == DeadlineWorker::Outcome::kBusy);
  release->set_value();
  REQUIRE(w.WaitUntil(std::chrono::steady_clock::now() + 10s));
  CHECK_FALSE(w.Busy());
  CHECK(w.Run([&x] { x = 2; }, std::chrono::steady_clock::now() + 1s) == DeadlineWorker::Outcome::kDone);
  CHECK(x == 2);
}

TEST_CASE("DeadlineWorker: destroyed while a task is stuck, without waiting for it", "[sys][worker]") {
  auto release = std::make_shared<std::promise<void>>();
  auto ended = std::make_shared<std::promise<void>>();
  auto t0 = std::chrono::steady_clock::now();
  {
    DeadlineWorker w;
    CHECK(w.Run(
              [gate = release->get_future().share(), ended] {
                gate.wait();
                ended->set_value();
              },
              t0 + 20ms) == DeadlineWorker::Outcome::kLate);
  }  // ~DeadlineWorker detaches
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  auto done = ended->get_future();
  release->set_value();  // the detached thread finishes before the test binary exits
  CHECK(done.wait_for(10s) == std::future_status::ready);
}
