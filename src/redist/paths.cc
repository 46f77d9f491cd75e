#include "redist/paths.h"

#include <vector>

#include "util/strings.h"

namespace gp::redist {

bool Normalize(const std::string& path, std::string& out) {
  std::vector<std::string> parts;
  for (const auto& p : Split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  out = Join(parts, "/");
  return true;
}

bool IsSafeRelativePath(const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find('\0') != std::string::npos) return false;
  for (const auto& p : Split(path, '/'))
    if (p.empty() || p == "." || p == "..") return false;
  return true;
}

std::string PlaceEntry(const sys::ArchiveEntry& e, const std::string& top_dir, std::string& rel,
                       std::string& rel_link) {
  const std::string shown = "archive entry \"" + e.path + "\"";
  if (e.path.empty()) return shown + ": empty name";
  if (e.path.size() > kMaxEntryPath)
    return "archive entry \"" + e.path.substr(0, 60) + "...\": a name of " + std::to_string(e.path.size()) +
           " bytes, longer than " + std::to_string(kMaxEntryPath);
  if (e.link.size() > kMaxEntryPath)
    return shown + ": a link target of " + std::to_string(e.link.size()) + " bytes, longer than " +
           std::to_string(kMaxEntryPath);
  if (e.path[0] == '/') return shown + ": absolute path";
  std::string path = e.path;
  while (EndsWith(path, "/")) path.pop_back();  // directories are stored as "dir/"
  for (const auto& p : Split(path, '/'))
    if (p == "..") return shown + ": \"..\" climbs out of the prefix";
  std::string norm;
  Normalize(path, norm);
  if (norm != top_dir && !StartsWith(norm, top_dir + "/"))
    return shown + ": outside the archive's top directory " + top_dir + "/";
  rel = norm == top_dir ? "" : norm.substr(top_dir.size() + 1);
  switch (e.type) {
    case sys::ArchiveEntry::Type::kOther:
      return shown + ": a device, FIFO or socket";
    case sys::ArchiveEntry::Type::kDir:
    case sys::ArchiveEntry::Type::kFile:
      if (rel.empty() && e.type == sys::ArchiveEntry::Type::kFile)
        return shown + ": a file in place of the top directory";
      return "";
    case sys::ArchiveEntry::Type::kSymlink: {
      if (rel.empty()) return shown + ": a link in place of the top directory";
      if (e.link.empty() || e.link[0] == '/')
        return shown + ": symlink to \"" + e.link + "\" leaves the prefix";
      // ".." only before the first name: it then climbs from this entry's own directory, which holds no
      // symlink (libarchive refuses to extract through one). After a name it could follow a link's "..".
      bool named = false;
      for (const auto& p : Split(e.link, '/')) {
        if (p == ".." && named) return shown + ": symlink to \"" + e.link + "\" climbs after a name";
        if (!p.empty() && p != "." && p != "..") named = true;
      }
      const auto slash = rel.rfind('/');
      const std::string dir = slash == std::string::npos ? "" : rel.substr(0, slash);
      std::string target;
      if (!Normalize(dir.empty() ? e.link : dir + "/" + e.link, target) || target.empty())
        return shown + ": symlink to \"" + e.link + "\" leaves the prefix";
      return "";
    }
    case sys::ArchiveEntry::Type::kHardlink: {
      std::string link;
      if (e.link.empty() || e.link[0] == '/' || !Normalize(e.link, link) || !StartsWith(link, top_dir + "/"))
        return shown + ": hard link to \"" + e.link + "\" leaves the prefix";
      rel_link = link.substr(top_dir.size() + 1);
      if (rel.empty()) return shown + ": a link in place of the top directory";
      return "";
    }
  }
  return shown + ": unknown type";
}

std::string ArchivePlacement::Place(const sys::ArchiveEntry& e, std::string& rel, std::string& rel_link) {
  using Type = sys::ArchiveEntry::Type;
  std::string why = PlaceEntry(e, top_, rel, rel_link);
  if (!why.empty()) return why;
  Type now = e.type;
  if (e.type == Type::kHardlink) {
    auto it = placed_.find(rel_link);
    if (it == placed_.end() || it->second != Type::kFile)
      return "archive entry \"" + e.path + "\": hard link to \"" + e.link + "\", " +
             (it == placed_.end()            ? "which no earlier entry of the archive is"
              : it->second == Type::kSymlink ? "a symbolic link"
                                             : "a directory") +
             " (a hard link must name a regular file)";
    now = Type::kFile;  // one more name of that file
  }
  placed_[rel] = now;
  return "";
}

}  // namespace gp::redist
