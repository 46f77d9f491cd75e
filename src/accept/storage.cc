#include "accept/storage.h"

#include <algorithm>
#include <cstring>

#include "accept/format.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::accept {
namespace {

// Each 4 KiB block starts with its stamp: the block's index in the file, mixed so that a block read from the
// wrong place, a stale block or zeros differ.
uint64_t Stamp(uint64_t block) { return (block + 1) * 0x9E3779B97F4A7C15ULL; }

void StampChunk(char* buf, uint64_t offset, uint64_t n) {
  for (uint64_t at = 0; at < n; at += kStorageAlign) {
    const uint64_t s = Stamp((offset + at) / kStorageAlign);
    std::memcpy(buf + at, &s, sizeof s);
  }
}

// The first block of `buf` whose stamp is wrong, as a file offset; -1 when all are right.
int64_t WrongBlock(const char* buf, uint64_t offset, uint64_t n) {
  for (uint64_t at = 0; at < n; at += kStorageAlign) {
    uint64_t s = 0;
    std::memcpy(&s, buf + at, sizeof s);
    if (s != Stamp((offset + at) / kStorageAlign)) return static_cast<int64_t>(offset + at);
  }
  return -1;
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Gb(uint64_t bytes) { return FormatFigure(static_cast<double>(bytes) / 1e9) + " GB"; }

Check StorageBase(const StorageResult& r, const std::string& name) {
  Check c;
  c.group = "storage";
  c.name = name;
  c.path = r.path;
  c.io = r.io;
  c.bytes = r.bytes;
  return c;
}

}  // namespace

uint64_t ParseStorageSize(const std::string& text) {
  uint64_t b = 0;
  if (!ParseSize(text, &b) || b < kMinStorageBytes || b > kMaxStorageBytes)
    throw FlagError("--storage-size",
                    "a size from 1MiB to 100TB (16GB, 512MiB), not " + QuoteToken(text) + BareUnitHint(text));
  return b;
}

uint64_t AlignedStorageBytes(uint64_t bytes) {
  return (bytes + kStorageAlign - 1) / kStorageAlign * kStorageAlign;
}

StorageResult MeasureStorage(StorageIo& io, char* buf, uint64_t bytes, const StorageClock& now,
                             const std::function<bool()>& stopped) {
  StorageResult r;
  r.bytes = bytes;
  std::memset(buf, 0xA5, kStorageChunk);
  const auto interrupted = [&] {
    if (!stopped || !stopped()) return false;
    r.interrupted = true;
    r.error = "interrupted";
    return true;
  };
  auto t0 = now();
  for (uint64_t off = 0; off < bytes; off += kStorageChunk) {
    if (interrupted()) return r;
    const uint64_t n = std::min(kStorageChunk, bytes - off);
    StampChunk(buf, off, n);
    if (!io.Append(buf, n, &r.error)) return r;
  }
  if (!io.Sync(&r.error)) return r;
  r.write_s = Seconds(now() - t0);
  // The mode is known once the first write went through (the file may have been reopened without O_DIRECT).
  r.io = io.Direct() ? "O_DIRECT" : "fsync + POSIX_FADV_DONTNEED";
  if (!io.Direct() && !io.DropCache(&r.error)) return r;
  t0 = now();
  for (uint64_t off = 0; off < bytes; off += kStorageChunk) {
    if (interrupted()) return r;
    const uint64_t n = std::min(kStorageChunk, bytes - off);
    if (!io.ReadAt(buf, n, off, &r.error)) return r;
    if (const int64_t at = WrongBlock(buf, off, n); at >= 0) {
      r.error = "the data read back differs from what was written, at byte " + std::to_string(at);
      return r;
    }
  }
  r.read_s = Seconds(now() - t0);
  return r;
}

std::vector<Check> StorageChecks(const StorageResult& r, const std::optional<StorageFloor>& floor) {
  if (!r.error.empty()) {
    Check c = StorageBase(r, "write and read");
    c.status = Status::kFail;
    c.reason = TerminalSafe(r.error);
    return {c};
  }
  const double size_gb = static_cast<double>(r.bytes) / 1e9;
  std::optional<Value> level;
  if (floor) {
    Value v;
    v.quantity = "storage";
    v.level = "floor";
    v.value = floor->bytes_per_s / 1e9;
    v.text = floor->text;
    v.unit = "GB/s";
    v.kind = "offer";
    v.source = "the offer (--expect storage=" + floor->path + ":" + floor->text + ")";
    level = v;
  }
  std::vector<Check> out;
  for (const auto& [name, seconds] :
       {std::pair<const char*, double>{"write", r.write_s}, {"read", r.read_s}}) {
    Check c = StorageBase(r, name);
    c.unit = "GB/s";
    c.measured = seconds > 0 ? size_gb / seconds : 0;
    c.floor = level;
    const std::string what = std::string(name == std::string("write") ? "wrote " : "read back ") +
                             Gb(r.bytes) + " in " + FormatFigure(seconds) + " s (" + r.io + ")";
    if (!level) {
      c.status = Status::kNoExpectation;
      c.reason = what + "; no floor: --expect storage=PATH:RATE judges it";
    } else if (*c.measured < level->value) {
      c.status = Status::kFail;
      c.reason = what + ", below the offer's " + floor->text;
    } else {
      c.status = Status::kPass;
      c.reason = what;
    }
    out.push_back(c);
  }
  Check cp = StorageBase(r, "checkpoint");
  cp.unit = "s";
  cp.measured = r.write_s;
  cp.status = Status::kNotApplicable;
  cp.reason = "one checkpoint of " + Gb(r.bytes) + " takes " + FormatFigure(r.write_s) + " s to write, " +
              FormatFigure(r.read_s) + " s to read back";
  out.push_back(cp);
  return out;
}

Check UnmeasuredFloor(const StorageFloor& f) {
  Check c;
  c.group = "storage";
  c.name = "write";
  c.path = f.path;
  c.status = Status::kSkipped;
  c.reason = "the offer gives a floor for " + TerminalSafe(f.path) + "; --storage " + TerminalSafe(f.path) +
             " measures it";
  return c;
}

bool SameStoragePath(const std::string& a, const std::string& b) {
  auto trim = [](std::string s) {
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  return trim(a) == trim(b);
}

}  // namespace gp::accept
