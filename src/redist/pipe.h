// A bounded byte ring between the download (writer: libcurl's callback on the download thread, which hashes
// the same bytes) and the extraction (reader: libarchive's read callback on its own thread), so the network,
// sha256 and xz decompression overlap instead of running one after the other.
// One copy: libcurl's buffer into the ring. The reader is handed a pointer into the ring, valid until its
// next Read (libarchive's read-callback contract), so nothing is copied or allocated per piece. When the
// reader is slower (xz decoding) the ring fills and the writer waits, which slows the transfer down through
// TCP; when the network is slower the reader waits. Each side wakes the other only when the other is waiting.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>

namespace gp::redist {

class BytePipe {
 public:
  // `capacity`: bytes buffered at most; `max_read`: the most one Read hands out (so space comes back in
  // steps while libarchive decodes a piece).
  explicit BytePipe(size_t capacity = 16u << 20, size_t max_read = 1u << 20)
      : buf_(new char[capacity]), cap_(capacity), max_read_(std::min(max_read, capacity)) {}

  // Writer: copies `len` bytes in, waiting for space. False when the reader has failed (stop downloading).
  // Once the reader has finished normally, data is accepted and dropped (the hash still needs it).
  bool Push(const char* data, size_t len) {
    std::unique_lock<std::mutex> lk(mu_);
    while (len > 0) {
      if (state_ == kFailed) return false;
      if (state_ == kDone) return true;
      if (used_ == cap_) {
        writer_waiting_ = true;
        space_.wait(lk, [&] { return used_ < cap_ || state_ != kReading; });
        writer_waiting_ = false;
        continue;
      }
      const size_t tail = (head_ + used_) % cap_;
      const size_t n = std::min({len, cap_ - used_, cap_ - tail});
      // The region [tail, tail + n) is free and the reader never touches it until `used_` grows, so the copy
      // can run unlocked.
      lk.unlock();
      std::memcpy(buf_.get() + tail, data, n);
      lk.lock();
      used_ += n;
      data += n;
      len -= n;
      if (reader_waiting_) ready_.notify_one();
    }
    return true;
  }

  // Writer: no more data; `failed` makes the reader's next Read return -1 instead of 0.
  void Close(bool failed) {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
    write_failed_ = failed;
    ready_.notify_all();
  }

  // Reader: releases the piece handed out by the previous Read, then points *data at the next one.
  // Returns its length, 0 at the end, -1 when the writer failed.
  long Read(const void** data) {
    std::unique_lock<std::mutex> lk(mu_);
    if (lent_ > 0) {
      head_ = (head_ + lent_) % cap_;
      used_ -= lent_;
      lent_ = 0;
      if (writer_waiting_) space_.notify_one();
    }
    if (used_ == 0 && !closed_) {
      reader_waiting_ = true;
      ready_.wait(lk, [&] { return used_ > 0 || closed_; });
      reader_waiting_ = false;
    }
    if (used_ == 0) return write_failed_ ? -1 : 0;
    lent_ = std::min({used_, cap_ - head_, max_read_});
    *data = buf_.get() + head_;
    return static_cast<long>(lent_);
  }

  // Reader: stops; `failed` makes Push return false.
  void Finish(bool failed) {
    std::lock_guard<std::mutex> lk(mu_);
    state_ = failed ? kFailed : kDone;
    space_.notify_all();
  }

 private:
  enum State { kReading, kDone, kFailed };
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::unique_ptr<char[]> buf_;
  const size_t cap_, max_read_;
  size_t head_ = 0;  // first byte not yet released by the reader
  size_t used_ = 0;  // bytes written and not yet released (the piece lent to the reader included)
  size_t lent_ = 0;  // the reader's current piece, at head_
  bool closed_ = false, write_failed_ = false;
  bool reader_waiting_ = false, writer_waiting_ = false;
  State state_ = kReading;
};

}  // namespace gp::redist
