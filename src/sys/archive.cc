// libarchive through dlopen("libarchive.so.13") on first use; <archive.h> is included for types and
// constants only.
#include "sys/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <memory>

#include "sys/dl.h"

namespace gp::sys {
namespace {

struct ArchiveApi {
  void* handle = nullptr;
  std::string error;
  decltype(&archive_read_new) read_new = nullptr;
  decltype(&archive_read_support_filter_xz) filter_xz = nullptr;
  decltype(&archive_read_support_filter_gzip) filter_gzip = nullptr;
  decltype(&archive_read_support_filter_none) filter_none = nullptr;
  decltype(&archive_read_support_format_tar) format_tar = nullptr;
  decltype(&archive_read_open) read_open = nullptr;
  decltype(&archive_read_next_header) next_header = nullptr;
  decltype(&archive_read_data_block) data_block = nullptr;
  decltype(&archive_read_free) read_free = nullptr;
  decltype(&archive_read_support_format_raw) format_raw = nullptr;
  decltype(&archive_read_open_memory) open_memory = nullptr;
  decltype(&archive_read_data) read_data = nullptr;
  decltype(&archive_filter_code) filter_code = nullptr;
  decltype(&archive_error_string) error_string = nullptr;
  decltype(&archive_write_disk_new) disk_new = nullptr;
  decltype(&archive_write_disk_set_options) disk_options = nullptr;
  decltype(&archive_write_header) write_header = nullptr;
  decltype(&archive_write_data_block) write_block = nullptr;
  decltype(&archive_write_finish_entry) finish_entry = nullptr;
  decltype(&archive_write_close) write_close = nullptr;
  decltype(&archive_write_free) write_free = nullptr;
  decltype(&archive_entry_pathname) entry_pathname = nullptr;
  decltype(&archive_entry_set_pathname) entry_set_pathname = nullptr;
  decltype(&archive_entry_filetype) entry_filetype = nullptr;
  decltype(&archive_entry_symlink) entry_symlink = nullptr;
  decltype(&archive_entry_hardlink) entry_hardlink = nullptr;
  decltype(&archive_entry_set_hardlink) entry_set_hardlink = nullptr;
  decltype(&archive_entry_size) entry_size = nullptr;
  decltype(&archive_entry_perm) entry_perm = nullptr;
  decltype(&archive_entry_set_perm) entry_set_perm = nullptr;
};

bool BindArchiveLib(void* lib, ArchiveApi& api) {
  return DlBind(lib, "archive_read_new", api.read_new) &&
         DlBind(lib, "archive_read_support_filter_xz", api.filter_xz) &&
         DlBind(lib, "archive_read_support_filter_gzip", api.filter_gzip) &&
         DlBind(lib, "archive_read_support_filter_none", api.filter_none) &&
         DlBind(lib, "archive_read_support_format_tar", api.format_tar) &&
         DlBind(lib, "archive_read_open", api.read_open) &&
         DlBind(lib, "archive_read_next_header", api.next_header) &&
         DlBind(lib, "archive_read_data_block", api.data_block) &&
         DlBind(lib, "archive_read_free", api.read_free) &&
         DlBind(lib, "archive_read_support_format_raw", api.format_raw) &&
         DlBind(lib, "archive_read_open_memory", api.open_memory) &&
         DlBind(lib, "archive_read_data", api.read_data) &&
         DlBind(lib, "archive_filter_code", api.filter_code) &&
         DlBind(lib, "archive_error_string", api.error_string) &&
         DlBind(lib, "archive_write_disk_new", api.disk_new) &&
         DlBind(lib, "archive_write_disk_set_options", api.disk_options) &&
         DlBind(lib, "archive_write_header", api.write_header) &&
         DlBind(lib, "archive_write_data_block", api.write_block) &&
         DlBind(lib, "archive_write_finish_entry", api.finish_entry) &&
         DlBind(lib, "archive_write_close", api.write_close) &&
         DlBind(lib, "archive_write_free", api.write_free) &&
         DlBind(lib, "archive_entry_pathname", api.entry_pathname) &&
         DlBind(lib, "archive_entry_set_pathname", api.entry_set_pathname) &&
         DlBind(lib, "archive_entry_filetype", api.entry_filetype) &&
         DlBind(lib, "archive_entry_symlink", api.entry_symlink) &&
         DlBind(lib, "archive_entry_hardlink", api.entry_hardlink) &&
         DlBind(lib, "archive_entry_set_hardlink", api.entry_set_hardlink) &&
         DlBind(lib, "archive_entry_size", api.entry_size) &&
         DlBind(lib, "archive_entry_perm", api.entry_perm) &&
         DlBind(lib, "archive_entry_set_perm", api.entry_set_perm);
}

const ArchiveApi& ArchiveLib() { return DlLoadOnce(kLibarchiveSoname, "archive_* symbols", BindArchiveLib); }

struct Input {
  const ArchiveInput* fn = nullptr;
  bool failed = false;
};

la_ssize_t OnRead(struct archive*, void* user, const void** buf) {
  auto* in = static_cast<Input*>(user);
  long n = (*in->fn)(buf);
  if (n < 0) {
    in->failed = true;
    return -1;
  }
  return n;
}

ArchiveEntry Describe(const ArchiveApi& api, struct archive_entry* e) {
  ArchiveEntry out;
  const char* p = api.entry_pathname(e);
  out.path = p ? p : "";
  out.size = static_cast<uint64_t>(api.entry_size(e));
  out.mode = static_cast<unsigned>(api.entry_perm(e));
  const char* hard = api.entry_hardlink(e);
  if (hard) {
    out.type = ArchiveEntry::Type::kHardlink;
    out.link = hard;
    return out;
  }
  switch (api.entry_filetype(e)) {
    case AE_IFREG:
      out.type = ArchiveEntry::Type::kFile;
      break;
    case AE_IFDIR:
      out.type = ArchiveEntry::Type::kDir;
      break;
    case AE_IFLNK: {
      out.type = ArchiveEntry::Type::kSymlink;
      const char* t = api.entry_symlink(e);
      out.link = t ? t : "";
      break;
    }
    default:
      out.type = ArchiveEntry::Type::kOther;
      break;
  }
  return out;
}

// The process umask for one scope, the old one back after it.
struct UmaskFor {
  explicit UmaskFor(mode_t m) : was(::umask(m)) {}
  ~UmaskFor() { ::umask(was); }
  UmaskFor(const UmaskFor&) = delete;
  UmaskFor& operator=(const UmaskFor&) = delete;
  mode_t was;
};

// One tar extraction under way: the library, the tar reader and the disk writer, the resolved destination,
// the limits and the result so far. Its steps return false once the result holds the error to return.
struct TarRun {
  const ArchiveApi& api;
  struct archive* in;
  struct archive* out;
  const Input& src;
  const std::string& root;
  const ExtractLimits& limits;
  const std::string bytes_limit;
  ExtractResult& res;

  // Records a failure of reader or writer `a` (or the download's, when that is what failed); false.
  bool Fail(struct archive* a, const std::string& what) {
    const char* e = api.error_string(a);
    res.error = src.failed ? "the download failed" : what + (e ? std::string(": ") + e : std::string());
    return false;
  }
  // Records a limit the archive passes; false.
  bool Exceeds(ExtractResult::Over what, const std::string& why) {
    res.over = what;
    res.error = why;
    return false;
  }
  // Records an entry refused; false.
  bool Refuse(const std::string& why) {
    res.error = why;
    return false;
  }
};

// Checks the entry against the limits: the number of entries, and a file's size against the bytes left.
bool TarEntryFits(TarRun& run, const ArchiveEntry& desc) {
  const ExtractResult& res = run.res;
  if (res.entries >= run.limits.max_entries)
    return run.Exceeds(ExtractResult::Over::kEntries,
                       "more than " + std::to_string(run.limits.max_entries) + " entries");
  if (desc.type == ArchiveEntry::Type::kFile && desc.size > run.limits.max_bytes - res.bytes)
    return run.Exceeds(ExtractResult::Over::kBytes, run.bytes_limit + " (\"" + desc.path + "\" would add " +
                                                        std::to_string(desc.size) + " to the " +
                                                        std::to_string(res.bytes) + " written)");
  return true;
}

// Points entry `e` where the placer puts it under the root (`target`), with its installed mode; a hard
// link only to a regular file already extracted.
bool TarEntryPlace(TarRun& run, struct archive_entry* e, const ArchiveEntry& desc, const ArchivePlacer& place,
                   std::string& target) {
  std::string rel, rel_link;
  if (std::string why = place(desc, rel, rel_link); !why.empty()) return run.Refuse(why);
  target = run.root + "/" + rel;
  if (target.size() >= PATH_MAX)
    return run.Refuse("archive entry \"" + desc.path + "\": its path here would be longer than PATH_MAX");
  run.api.entry_set_pathname(e, target.c_str());
  if (desc.type == ArchiveEntry::Type::kFile || desc.type == ArchiveEntry::Type::kDir)
    run.api.entry_set_perm(e, InstalledMode(desc));
  if (desc.type == ArchiveEntry::Type::kHardlink) {
    // Linux's link(2) does not follow a symbolic link: a hard link to one is a second symbolic link,
    // somewhere its target was never checked from.
    const std::string link = run.root + "/" + rel_link;
    struct stat st {};
    if (link.size() >= PATH_MAX || ::lstat(link.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return run.Refuse("archive entry \"" + desc.path + "\": hard link to \"" + desc.link +
                        "\", not a regular file");
    run.api.entry_set_hardlink(e, link.c_str());
  }
  return true;
}

// Copies a file entry's data blocks to the disk writer (no holes, within the bytes limit), telling
// `written` about `target` every kWrittenStep bytes.
bool TarCopyFileData(TarRun& run, const ArchiveEntry& desc, const std::string& target,
                     const ArchiveWritten& written) {
  ExtractResult& res = run.res;
  uint64_t file_bytes = 0, told = 0;
  for (;;) {
    const void* buf = nullptr;
    size_t len = 0;
    la_int64_t off = 0;
    int rc = run.api.data_block(run.in, &buf, &len, &off);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return run.Fail(run.in, "corrupt archive at " + desc.path);
    if (static_cast<uint64_t>(off) != file_bytes)
      return run.Refuse("archive entry \"" + desc.path + "\": a sparse file (holes are not accepted)");
    if (len > run.limits.max_bytes - res.bytes)
      return run.Exceeds(ExtractResult::Over::kBytes, run.bytes_limit);
    if (run.api.write_block(run.out, buf, len, off) < ARCHIVE_WARN)
      return run.Fail(run.out, "cannot write " + desc.path);
    res.bytes += len;
    file_bytes += len;
    if (written && file_bytes - told >= kWrittenStep) {
      told = file_bytes;
      written(target);
    }
  }
  return true;
}

// Extracts the entry whose header was just read: limits, placement, header, data, finish.
bool TarExtractEntry(TarRun& run, struct archive_entry* e, const ArchivePlacer& place,
                     const ArchiveWritten& written) {
  ArchiveEntry desc = Describe(run.api, e);
  if (!TarEntryFits(run, desc)) return false;
  std::string target;
  if (!TarEntryPlace(run, e, desc, place, target)) return false;
  if (run.api.write_header(run.out, e) < ARCHIVE_WARN)
    return run.Fail(run.out, "cannot extract " + desc.path);
  ++run.res.entries;
  if (desc.type == ArchiveEntry::Type::kFile && !TarCopyFileData(run, desc, target, written)) return false;
  if (run.api.finish_entry(run.out) < ARCHIVE_WARN) return run.Fail(run.out, "cannot finish " + desc.path);
  if (written && desc.type == ArchiveEntry::Type::kFile) written(target);
  return true;
}

}  // namespace

unsigned InstalledMode(const ArchiveEntry& e) {
  if (e.type == ArchiveEntry::Type::kDir) return 0755;
  return (e.mode & 0111) ? 0755 : 0644;
}

ExtractResult ExtractTar(const ArchiveInput& input, const std::string& dest, const ArchivePlacer& place,
                         const ArchiveWritten& written, const ExtractLimits& limits) {
  ExtractResult res;
  const ArchiveApi& api = ArchiveLib();
  if (!api.handle) {
    res.error = api.error;
    return res;
  }
  char real[PATH_MAX];
  if (!::realpath(dest.c_str(), real)) {
    res.error = "cannot resolve " + dest;
    return res;
  }
  const std::string root = real;
  std::unique_ptr<struct archive, decltype(api.read_free)> in(api.read_new(), api.read_free);
  // libarchive masks modes with the process umask, directories it makes for itself included: 022 while it
  // writes, so what it writes is the same whatever this process's umask is.
  const UmaskFor scoped(022);
  std::unique_ptr<struct archive, decltype(api.write_free)> out(api.disk_new(), api.write_free);
  if (!in || !out) {
    res.error = "libarchive: out of memory";
    return res;
  }
  api.filter_xz(in.get());
  api.filter_gzip(in.get());
  api.filter_none(in.get());
  api.format_tar(in.get());
  api.disk_options(out.get(), ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                  ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_UNLINK);
  Input src{&input, false};
  TarRun run{api,
             in.get(),
             out.get(),
             src,
             root,
             limits,
             "more than " + std::to_string(limits.max_bytes) + " bytes of file data",
             res};
  if (api.read_open(in.get(), &src, nullptr, &OnRead, nullptr) != ARCHIVE_OK) {
    run.Fail(in.get(), "not a tar archive");
    return res;
  }
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = api.next_header(in.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) {
      run.Fail(in.get(), "corrupt archive");
      return res;
    }
    if (!TarExtractEntry(run, e, place, written)) return res;
  }
  if (api.write_close(out.get()) < ARCHIVE_WARN) run.Fail(out.get(), "cannot finish the extraction");
  return res;
}

Gunzipped Gunzip(std::string_view gz, size_t max_bytes) {
  Gunzipped res;
  const ArchiveApi& api = ArchiveLib();
  if (!api.handle) {
    res.error = api.error;
    return res;
  }
  std::unique_ptr<struct archive, decltype(api.read_free)> in(api.read_new(), api.read_free);
  if (!in) {
    res.error = "libarchive: out of memory";
    return res;
  }
  api.filter_gzip(in.get());
  api.format_raw(in.get());
  auto fail = [&](const std::string& what) {
    const char* e = api.error_string(in.get());
    res.error = what + (e ? std::string(": ") + e : std::string());
    res.data.clear();
    return res;
  };
  // The raw format passes any bytes through: only gzip's magic number makes them gzip.
  if (gz.size() < 2 || gz[0] != '\x1f' || gz[1] != '\x8b') {
    res.error = "not gzip data";
    return res;
  }
  struct archive_entry* e = nullptr;
  // Data the gzip filter does not take (a bad header) is passed through raw: only a gzip filter at the
  // head of the chain means gzip data.
  if (api.open_memory(in.get(), gz.data(), gz.size()) != ARCHIVE_OK ||
      api.next_header(in.get(), &e) != ARCHIVE_OK || api.filter_code(in.get(), 0) != ARCHIVE_FILTER_GZIP)
    return fail("not gzip data");
  char buf[64 * 1024];
  for (;;) {
    const la_ssize_t n = api.read_data(in.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) return fail("corrupt gzip data");
    res.data.append(buf, static_cast<size_t>(n));
    if (res.data.size() > 2 * max_bytes) {  // keep the newest part: drop the oldest in large steps
      res.data.erase(0, res.data.size() - max_bytes);
      res.truncated = true;
    }
  }
  if (res.data.size() > max_bytes) {
    res.data.erase(0, res.data.size() - max_bytes);
    res.truncated = true;
  }
  if (res.truncated) {  // start at a line
    const size_t nl = res.data.find('\n');
    res.data.erase(0, nl == std::string::npos ? res.data.size() : nl + 1);
  }
  res.ok = true;
  return res;
}

}  // namespace gp::sys
