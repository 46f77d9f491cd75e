#include "cli/accept_storage.h"

#include <memory>

#include "accept/format.h"
#include "accept/storage.h"
#include "cli/size_inputs.h"
#include "layers/task.h"
#include "manifest/tree.h"
#include "size/estimate.h"
#include "size/host.h"
#include "size/settings.h"
#include "sys/host_info.h"
#include "sys/scratch_file.h"
#include "sys/stop_signal.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {

// sys::ScratchFile as the measurement's file.
class ScratchIo : public accept::StorageIo {
 public:
  explicit ScratchIo(sys::ScratchFile& f) : f_(f) {}
  bool Direct() const override { return f_.direct(); }
  bool Append(const char* p, size_t n, std::string* e) override { return f_.Append(p, n, e); }
  bool Sync(std::string* e) override { return f_.Sync(e); }
  bool DropCache(std::string* e) override { return f_.DropCache(e); }
  bool ReadAt(char* p, size_t n, uint64_t off, std::string* e) override { return f_.ReadAt(p, n, off, e); }

 private:
  sys::ScratchFile& f_;
};

std::string StorageGb(uint64_t bytes) {
  return accept::FormatFigure(static_cast<double>(bytes) / 1e9) + " GB";
}

accept::StorageResult MeasureOne(const std::string& dir, uint64_t bytes, char* buf, sys::Waiter* waiter) {
  accept::StorageResult r;
  r.path = dir;
  r.bytes = bytes;
  const std::string abs = sys::AbsoluteFromCwd(dir);
  const sys::DirSpace space = sys::DirSpaceOf(abs);
  if (space.kind != sys::DirSpace::kDirectory || !space.available || *space.available < bytes) {
    r.error = "no room left for " + StorageGb(bytes) + " (checked again before writing)";
    return r;
  }
  const std::unique_ptr<sys::ScratchFile> f =
      sys::ScratchFile::Create(abs, ".gpuprep-accept-storage-" + std::to_string(sys::OwnPid()), &r.error);
  if (!f) return r;
  ScratchIo io(*f);
  accept::StorageResult m = accept::MeasureStorage(
      io, buf, bytes, [] { return std::chrono::steady_clock::now(); },
      [waiter] { return waiter && waiter->Stopped(); });
  m.path = dir;
  return m;  // the file is removed here
}

}  // namespace

uint64_t StorageBytes(Context& ctx, const std::string& task, const std::string& storage_size) {
  if (task.empty())
    return accept::AlignedStorageBytes(storage_size.empty() ? accept::kDefaultStorageBytes
                                                            : accept::ParseStorageSize(storage_size));
  size::Task t;
  layers::ApplyTaskDocument(t, ReadFile(ctx, task, manifest::kMaxManifestBytes, "a task"), task);
  LoadTaskConfig(t, ctx);
  size::Finish(t);
  const size::HostNeed need = size::NeedFor(t, size::EstimateTask(t), 1, 1, 0);
  if (!(need.checkpoint >= static_cast<double>(accept::kMinStorageBytes) &&
        need.checkpoint <= static_cast<double>(accept::kMaxStorageBytes)))
    throw FlagError("--task", "the task's checkpoint (" + StorageGb(static_cast<uint64_t>(need.checkpoint)) +
                                  ") is outside 1MiB to 100TB; --storage-size sets the size instead");
  return accept::AlignedStorageBytes(static_cast<uint64_t>(need.checkpoint));
}

void CheckStorageDirs(const std::vector<std::string>& dirs, uint64_t bytes) {
  for (const auto& d : dirs) {
    if (d.empty() || d.size() > 4096 || ControlCharAt(d) || InvalidUtf8At(d))
      throw FlagError("--storage", "not a directory path: " + QuoteToken(d));
    const sys::DirSpace s = sys::DirSpaceOf(sys::AbsoluteFromCwd(d));
    const std::string q = TerminalSafe(d);
    switch (s.kind) {
      case sys::DirSpace::kMissing:
        throw FlagError("--storage", q + " does not exist");
      case sys::DirSpace::kNotDirectory:
        throw FlagError("--storage", q + " is not a directory");
      case sys::DirSpace::kUnreadable:
        throw FlagError("--storage", q + ": " + s.error);
      case sys::DirSpace::kDirectory:
        break;
    }
    if (!s.available)
      throw FlagError("--storage", q + ": its filesystem reports no size, so its free space is unknown");
    if (*s.available < bytes)
      throw FlagError("--storage", q + " has " + StorageGb(*s.available) + " free; the measurement writes " +
                                       StorageGb(bytes) + " (--storage-size or --task sets it)");
  }
}

std::vector<accept::Check> MeasureStorageDirs(Context& ctx, const std::vector<std::string>& dirs,
                                              uint64_t bytes,
                                              const std::vector<accept::StorageFloor>& floors) {
  std::vector<accept::Check> out;
  const sys::AlignedBuffer buf = sys::AlignedAlloc(dirs.empty() ? sys::kDirectAlign : accept::kStorageChunk);
  if (!buf) throw Error(kExitFailed, "accept: no memory for the storage measurement's buffer");
  std::unique_ptr<sys::Waiter> waiter;
  if (ctx.make_waiter) waiter = ctx.make_waiter();
  for (const auto& d : dirs) {
    if (!ctx.opts.quiet)
      *ctx.err << "gpuprep: accept: measuring storage in " << TerminalSafe(d) << " (" << StorageGb(bytes)
               << " written and read back)\n";
    const accept::StorageResult r = MeasureOne(d, bytes, buf.get(), waiter.get());
    if (r.interrupted)
      throw Error(kExitFailed,
                  "accept: interrupted; the storage measurement was stopped, its file removed, "
                  "and nothing was judged");
    std::optional<accept::StorageFloor> floor;
    for (const auto& f : floors)
      if (accept::SameStoragePath(f.path, d)) floor = f;
    for (auto& c : accept::StorageChecks(r, floor)) out.push_back(std::move(c));
  }
  for (const auto& f : floors) {
    bool measured = false;
    for (const auto& d : dirs) measured = measured || accept::SameStoragePath(f.path, d);
    if (!measured) out.push_back(accept::UnmeasuredFloor(f));
  }
  return out;
}

}  // namespace gp::cli
