// MapFs: the tests' in-memory filesystem (an Fs whose files are a map from path to contents, with no
// symbolic links), which records every change asked of it, so a test or a fuzz target can check what was
// written and what was removed.
#pragma once
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sys/fs.h"

namespace gp::test {

// Files from `files`; a directory is any path with a file below it, or one MakeDirs made. Writes replace
// the map's entry (no backups), a rename moves one, and each change is also recorded in order.
class MapFs : public sys::Fs {
 public:
  std::map<std::string, std::string> files;  // path -> contents
  std::set<std::string> dirs;                // made by MakeDirs (and those a test adds)
  bool live = false;                         // what IsLive says

  std::vector<std::string> written;                          // WriteAtomic and WriteOutput, each path
  std::vector<std::string> removed;                          // Remove, each path asked for
  std::vector<std::pair<std::string, std::string>> renamed;  // Rename, from and to

  // Replaces every file and directory with those of the tree under `root` on this machine, as a --root
  // DiskFs over it would show them ("ROOT/proc/stat" is "/proc/stat"); symbolic links are left out. Nothing
  // is recorded.
  void LoadTree(const std::string& root) {
    files.clear();
    dirs.clear();
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string p = "/" + e.path().lexically_relative(root).string();
      const auto type = e.symlink_status().type();
      if (type == std::filesystem::file_type::directory) dirs.insert(p);
      if (type != std::filesystem::file_type::regular) continue;
      std::ifstream in(e.path(), std::ios::binary);
      files[p].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }

  std::optional<std::string> Read(const std::string& p) const override {
    auto it = files.find(p);
    return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::optional<std::string> ReadPrefix(const std::string& p, size_t n) const override {
    auto r = Read(p);
    if (r && r->size() > n) r->resize(n);
    return r;
  }
  bool Exists(const std::string& p) const override { return files.count(p) > 0 || IsDir(p); }
  bool IsDir(const std::string& p) const override {
    if (dirs.count(p) > 0) return true;
    const std::string prefix = p == "/" ? "/" : p + "/";
    for (const auto& [k, v] : files)
      if (k.compare(0, prefix.size(), prefix) == 0) return true;
    for (const auto& d : dirs)
      if (d.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
  }
  std::vector<std::string> List(const std::string& dir) const override {
    std::set<std::string> out;
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    auto add = [&](const std::string& k) {
      if (k.size() > prefix.size() && k.compare(0, prefix.size(), prefix) == 0)
        out.insert(k.substr(prefix.size(), k.find('/', prefix.size()) - prefix.size()));
    };
    for (const auto& [k, v] : files) add(k);
    for (const auto& d : dirs) add(d);
    return {out.begin(), out.end()};
  }
  std::optional<std::string> ReadLink(const std::string&) const override { return std::nullopt; }
  std::optional<sys::SpaceInfo> Space(const std::string&) const override { return std::nullopt; }

  sys::WriteResult WriteAtomic(const std::string& p, const std::string& contents, unsigned, bool) override {
    written.push_back(p);
    files[p] = contents;
    return {};
  }
  sys::OutputTarget OutputTargetOf(const std::string& p) const override {
    if (files.count(p) == 0 && IsDir(p)) return {sys::OutputKind::kRefused, p + " is a directory"};
    return {};
  }
  sys::WriteResult WriteOutput(const std::string& p, const std::string& contents, unsigned, bool) override {
    written.push_back(p);
    files[p] = contents;
    return {};
  }
  sys::WriteResult Rename(const std::string& from, const std::string& to) override {
    renamed.emplace_back(from, to);
    if (from == to) return {};
    auto it = files.find(from);
    if (it == files.end()) return {false, "rename " + from + ": No such file or directory", ""};
    files[to] = it->second;
    files.erase(from);
    return {};
  }
  sys::WriteResult Remove(const std::string& p) override {
    removed.push_back(p);
    files.erase(p);
    return {};
  }
  sys::WriteResult MakeDirs(const std::string& p, unsigned) override {
    dirs.insert(p);
    return {};
  }
  std::string HostPath(const std::string& p) const override { return p; }
  bool IsLive() const override { return live; }
};

}  // namespace gp::test
