// Durability of an extracted tree without a stall at the end (redist/install.cc): while the archive is still
// being decoded, a background thread asks the kernel to start writing each file's pages out
// (sync_file_range(SYNC_FILE_RANGE_WRITE), which never waits for the disk), so that the fsyncs made before
// the tree is renamed into place find little left to write. Only the tree's own files are flushed, never the
// whole filesystem (syncfs would also wait for every other writer on the host).
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "sys/fs.h"

namespace gp::sys {

class Writeback {
 public:
  Writeback();
  ~Writeback();  // drops what is still queued and joins the thread
  Writeback(const Writeback&) = delete;
  Writeback& operator=(const Writeback&) = delete;

  // Queues `path` (a regular file on this machine, not followed if a link) for writeback; never blocks on
  // I/O. A failure to start writeback is ignored: SyncTree is what makes the tree durable.
  void Kick(const std::string& path);
  // Waits until every queued kick has been issued.
  void Drain();

 private:
  void Run();
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::string> queue_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

// fsync of every regular file and directory under `root` (a path on this machine; symlinks not followed),
// children before parents, so the whole tree survives a power cut once this returns ok.
WriteResult SyncTree(const std::string& root);

}  // namespace gp::sys
