// The redist extraction as it runs on a host: sys::ExtractTar (real libarchive) into a staging directory,
// each entry placed by redist::ArchivePlacement, within the limits the install sets (file data <=
// kUnpackRatio x the archive's size, entries capped), then the staging tree removed with sys::RemoveTree.
// Properties, whatever the archive and whether or not it was accepted:
//  - nothing is written outside the staging directory: each directory above it holds only the one below;
//  - in it, only regular files, directories and symbolic links; every link's target is relative and stays
//    inside it lexically from the link's own directory, and resolves (when it does) inside it;
//  - the file data on disk (each inode once) is within the byte limit, the names that are not directories
//  within
//    the entry limit, and ExtractResult says no more than that;
//  - RemoveTree leaves nothing.
// Input: the first byte chooses the form. Even: the rest is the archive as it arrives (libarchive detects xz,
// gzip or none). Odd: the rest describes entries, written as a tar by tests/support/tar.h, so that checksums
// are right and the fuzzer reaches the placement rules: per entry, a kind byte (type; 0x80: under the top
// directory), a name, a link target (each a length byte and bytes) and a data length byte (x 4 KiB).
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "redist/paths.h"
#include "support/tar.h"
#include "sys/archive.h"
#include "sys/tree.h"

namespace {

const char kTop[] = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive";
constexpr uint64_t kRatio = 32;       // redist::kUnpackRatio
constexpr uint64_t kMaxEntries = 64;  // small, so the fuzzer reaches it

[[noreturn]] void Violated(const std::string& what) {
  std::fprintf(stderr, "property violated: %s\n", what.c_str());
  std::abort();
}

// The sandbox: BASE/l0/l1/.../l7/staging, made once per process (on tmpfs when there is one).
struct Sandbox {
  std::string base, staging;
  std::vector<std::string> levels;  // BASE, BASE/l0, ... the staging directory's parent
  Sandbox() {
    char tmpl[64];
    std::snprintf(tmpl, sizeof tmpl, "%s/gpuprep-fuzz-XXXXXX",
                  ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!::mkdtemp(tmpl)) Violated("cannot make the sandbox");
    base = tmpl;
    std::string p = base;
    for (int i = 0; i < 8; ++i) {
      levels.push_back(p);
      p += "/l" + std::to_string(i);
      ::mkdir(p.c_str(), 0755);
    }
    levels.push_back(p);
    staging = p + "/staging";
    // libFuzzer ends with exit(): leave nothing behind. A copy of its own, as the handler runs after this
    // object (a function-local static) is destroyed.
    static const std::string* made = new std::string(base);
    std::atexit([] { gp::sys::RemoveTree(*made); });
  }
};

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.emplace_back(e->d_name);
  ::closedir(d);
  return out;
}

// Lexically: does `target`, read from directory `dir` (relative to the staging root), stay inside it?
bool StaysInside(const std::string& dir, const std::string& target) {
  if (target.empty() || target[0] == '/') return false;
  std::string norm;
  return gp::redist::Normalize(dir.empty() ? target : dir + "/" + target, norm) && !norm.empty();
}

void CheckTree(const Sandbox& box, const gp::sys::ExtractResult& res, uint64_t max_bytes) {
  for (size_t i = 0; i + 1 < box.levels.size(); ++i) {
    auto names = Names(box.levels[i]);
    const std::string below = box.levels[i + 1].substr(box.levels[i + 1].rfind('/') + 1);
    if (names.size() != 1 || names[0] != below) Violated("something was written into " + box.levels[i]);
  }
  auto last = Names(box.levels.back());
  if (last.size() != 1 || last[0] != "staging")
    Violated("something was written beside the staging directory");
  char real_root[PATH_MAX];
  if (!::realpath(box.staging.c_str(), real_root)) Violated("the staging directory went");
  const std::string root = real_root;
  uint64_t bytes = 0, non_dirs = 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::string> todo{""};  // relative directories still to walk (paths stay short: names <= 1024)
  while (!todo.empty()) {
    const std::string rel = todo.back();
    todo.pop_back();
    const std::string dir = rel.empty() ? box.staging : box.staging + "/" + rel;
    for (const auto& name : Names(dir)) {
      const std::string child = rel.empty() ? name : rel + "/" + name;
      const std::string path = box.staging + "/" + child;
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) Violated("cannot lstat " + child);
      if (S_ISDIR(st.st_mode)) {
        todo.push_back(child);
        continue;
      }
      ++non_dirs;
      if (S_ISREG(st.st_mode)) {
        if (seen.insert({st.st_dev, st.st_ino}).second) bytes += static_cast<uint64_t>(st.st_size);
      } else if (S_ISLNK(st.st_mode)) {
        char buf[PATH_MAX];
        ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
        if (n < 0) Violated("cannot read the link " + child);
        if (!StaysInside(rel, std::string(buf, static_cast<size_t>(n))))
          Violated("the link " + child + " -> " + std::string(buf, static_cast<size_t>(n)) +
                   " leaves the prefix");
        char resolved[PATH_MAX];
        if (::realpath(path.c_str(), resolved) && std::string(resolved).rfind(root, 0) != 0)
          Violated("the link " + child + " resolves to " + resolved + ", outside the prefix");
      } else {
        Violated(child + " is a device, FIFO or socket");
      }
    }
  }
  if (bytes > max_bytes)
    Violated(std::to_string(bytes) + " bytes on disk, above the limit " + std::to_string(max_bytes));
  if (res.bytes > max_bytes) Violated("ExtractResult.bytes above the limit");
  if (non_dirs > kMaxEntries || res.entries > kMaxEntries) Violated("more entries than the limit");
}

// The structured form: entries described by the fuzzer, written as a real tar.
std::string Structured(const uint8_t* data, size_t size) {
  std::vector<gp::test::TarEntry> entries;
  size_t i = 0;
  auto take = [&](size_t n) {
    std::string s(reinterpret_cast<const char*>(data + i), std::min(n, size - i));
    i += s.size();
    return s;
  };
  while (i < size && entries.size() < 2 * kMaxEntries) {
    const uint8_t kind = data[i++];
    gp::test::TarEntry e;
    static const char kTypes[] = {'0', '5', '2', '1', '3', '6', '0', '0'};
    e.type = kTypes[kind & 7];
    const std::string top = kTop;
    const size_t name_len = i < size ? data[i++] : 0;
    e.name = ((kind & 0x80) ? top + "/" : "") + take(name_len);
    const size_t link_len = i < size ? data[i++] : 0;
    e.link = take(link_len);
    if (e.type == '1' && (kind & 0x40)) e.link = top + "/" + e.link;  // hard links name archive paths
    const size_t kib4 = i < size ? data[i++] : 0;
    if (e.type == '0') e.data.assign(kib4 * 4096, static_cast<char>(kind));
    e.mode = (kind & 0x20) ? 07755 : 0644;
    entries.push_back(std::move(e));
  }
  return gp::test::Tar(entries);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Sandbox box;
  if (size == 0) return 0;
  const std::string archive = (data[0] & 1) ? Structured(data + 1, size - 1)
                                            : std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  // The limit the install sets: the size the index gives (here the input's), times the ratio.
  const uint64_t max_bytes = kRatio * size;
  if (::mkdir(box.staging.c_str(), 0700) != 0) Violated("the staging directory was left by the run before");
  size_t at = 0;
  gp::sys::ArchiveInput input = [&](const void** d) -> long {
    const size_t n = std::min<size_t>(archive.size() - at, 4096);
    *d = archive.data() + at;
    at += n;
    return static_cast<long>(n);
  };
  gp::redist::ArchivePlacement placement(kTop);
  gp::sys::ArchivePlacer place = [&](const gp::sys::ArchiveEntry& e, std::string& rel,
                                     std::string& rel_link) { return placement.Place(e, rel, rel_link); };
  const gp::sys::ExtractResult res =
      gp::sys::ExtractTar(input, box.staging, place, {}, {max_bytes, kMaxEntries});
  CheckTree(box, res, max_bytes);
  auto removed = gp::sys::RemoveTree(box.staging);
  if (!removed.ok) Violated(removed.error);
  struct stat st {};
  if (::lstat(box.staging.c_str(), &st) == 0) Violated("RemoveTree left the staging directory");
  return 0;
}
