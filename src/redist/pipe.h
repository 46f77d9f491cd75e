// A bounded queue of byte chunks between the download (writer: libcurl's callback, which also hashes)
// and the extraction (reader: libarchive's read callback on its own thread), so the network, sha256 and
// xz decompression overlap instead of running one after the other.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

namespace gp::redist {

class ChunkPipe {
 public:
  explicit ChunkPipe(size_t max_chunks = 64) : max_(max_chunks) {}

  // Writer: queues a copy; blocks while full. False when the reader has failed (stop downloading).
  // Once the reader has finished normally, data is accepted and dropped (the hash still needs it).
  bool Push(const char* data, size_t len) {
    std::unique_lock<std::mutex> lk(mu_);
    space_.wait(lk, [&] { return q_.size() < max_ || reader_state_ != kReading; });
    if (reader_state_ == kFailed) return false;
    if (reader_state_ == kDone) return true;
    q_.emplace_back(data, len);
    ready_.notify_one();
    return true;
  }
  // Writer: no more data; `failed` makes the reader's next Pop return -1 instead of 0.
  void Close(bool failed) {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
    write_failed_ = failed;
    ready_.notify_all();
  }
  // Reader: next chunk into `out`; 1 data, 0 end, -1 the writer failed.
  int Pop(std::string& out) {
    std::unique_lock<std::mutex> lk(mu_);
    ready_.wait(lk, [&] { return !q_.empty() || closed_; });
    if (!q_.empty()) {
      out = std::move(q_.front());
      q_.pop_front();
      space_.notify_one();
      return 1;
    }
    return write_failed_ ? -1 : 0;
  }
  // Reader: stops; `failed` makes Push return false.
  void Finish(bool failed) {
    std::lock_guard<std::mutex> lk(mu_);
    reader_state_ = failed ? kFailed : kDone;
    q_.clear();
    space_.notify_all();
  }

 private:
  enum State { kReading, kDone, kFailed };
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::string> q_;
  size_t max_;
  bool closed_ = false, write_failed_ = false;
  State reader_state_ = kReading;
};

}  // namespace gp::redist
