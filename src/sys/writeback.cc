#include "sys/writeback.h"

#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace gp::sys {

Writeback::Writeback() : thread_([this] { Run(); }) {}

Writeback::~Writeback() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

void Writeback::Kick(const std::string& path) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    // A file kicked again before its turn needs one kick: it covers every page dirty by then.
    if (std::find(queue_.begin(), queue_.end(), path) != queue_.end()) return;
    queue_.push_back(path);
  }
  cv_.notify_one();
}

void Writeback::Drain() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_.wait(lk, [&] { return queue_.empty() && !busy_; });
}

void Writeback::Run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const std::string path = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lk.unlock();
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
      ::close(fd);
    }
    lk.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

namespace {

thread_local std::string g_sync_error;

int SyncOne(const char* path, const struct stat* st, int type, struct FTW*) {
  int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
  if (type == FTW_DP || type == FTW_D)
    flags |= O_DIRECTORY;
  else if (type != FTW_F || !S_ISREG(st->st_mode))
    return 0;  // symlinks: their directory's fsync records them
  int fd = ::open(path, flags);
  if (fd < 0 || ::fsync(fd) != 0) {
    g_sync_error = std::string("cannot sync ") + path + ": " + ::strerror(errno);
    if (fd >= 0) ::close(fd);
    return 1;
  }
  ::close(fd);
  return 0;
}

}  // namespace

WriteResult SyncTree(const std::string& root) {
  g_sync_error.clear();
  WriteResult r;
  if (::nftw(root.c_str(), &SyncOne, 32, FTW_DEPTH | FTW_PHYS) != 0) {
    r.ok = false;
    r.error = g_sync_error.empty() ? "cannot sync " + root + ": " + ::strerror(errno) : g_sync_error;
  }
  return r;
}

}  // namespace gp::sys
