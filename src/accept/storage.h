// The storage measurement of `gpuprep accept --storage PATH` (docs/accept.md, "Storage"): gpuprep writes one
// checkpoint-sized file in the directory, makes it durable, reads it back from the disk and checks what it
// read; the throughputs and the seconds one checkpoint takes are judged only against a floor the offer gives
// (`--expect storage=PATH:RATE`). The file's operations come through StorageIo (sys::ScratchFile on the live
// host, a stand-in in tests), and the clock and the stop request are functions, so this stays plain logic.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "accept/judge.h"

namespace gp::accept {

// --storage-size's default: 16 GB (decimal, as docs/values.md reads sizes).
inline constexpr uint64_t kDefaultStorageBytes = 16'000'000'000ULL;
// Bounds of a storage measurement's size: 1 MiB to 100 TB.
inline constexpr uint64_t kMinStorageBytes = 1ULL << 20;
inline constexpr uint64_t kMaxStorageBytes = 100'000'000'000'000ULL;
// Bytes per request: one stream of 16 MiB requests.
inline constexpr uint64_t kStorageChunk = 16ULL << 20;
// Every request's length and the file's size are a multiple of this (O_DIRECT's alignment).
inline constexpr uint64_t kStorageAlign = 4096;

// --storage-size SIZE: a decimal or binary size (16GB, 8MiB) within the bounds. Throws FlagError.
uint64_t ParseStorageSize(const std::string& text);
// The bytes written: `bytes` rounded up to kStorageAlign.
uint64_t AlignedStorageBytes(uint64_t bytes);

// The file under measurement.
class StorageIo {
 public:
  virtual ~StorageIo() = default;
  virtual bool Direct() const = 0;  // opened with O_DIRECT (else: fsync and fadvise before reading)
  virtual bool Append(const char* p, size_t n, std::string* error) = 0;
  virtual bool Sync(std::string* error) = 0;
  virtual bool DropCache(std::string* error) = 0;
  virtual bool ReadAt(char* p, size_t n, uint64_t offset, std::string* error) = 0;
};

struct StorageResult {
  std::string path;  // as the user gave it
  uint64_t bytes = 0;
  std::string io;  // "O_DIRECT" | "fsync + POSIX_FADV_DONTNEED"
  double write_s = 0, read_s = 0;
  std::string error;         // non-empty: the measurement stopped (write, read or a wrong byte)
  bool interrupted = false;  // a stop was requested
};

using StorageClock = std::function<std::chrono::steady_clock::time_point()>;

// Writes `bytes` (a multiple of kStorageAlign) through `io` with `buf` (kStorageChunk bytes, aligned), makes
// it durable (fdatasync; without O_DIRECT also drops the file's pages), reads it back and checks each 4 KiB
// block's stamp. `stopped` is asked between requests.
StorageResult MeasureStorage(StorageIo& io, char* buf, uint64_t bytes, const StorageClock& now,
                             const std::function<bool()>& stopped);

// The checks of one path: write and read throughput (GB/s) and one checkpoint's seconds, judged against the
// floor for that path when the offer gives one, else "no expectation"; a failed measurement is one failed
// check.
std::vector<Check> StorageChecks(const StorageResult& r, const std::optional<StorageFloor>& floor);
// A floor the offer gives for a path that was not measured: a skipped check naming the flag that measures it.
Check UnmeasuredFloor(const StorageFloor& f);
// The same path as the user wrote it, a trailing slash aside.
bool SameStoragePath(const std::string& a, const std::string& b);

}  // namespace gp::accept
