// apt sources for the stack's repositories: the list line gpuprep writes, the conflicting entries it
// moves aside ("Conflicting values set for option Signed-By"), and whether apt has fetched the lists.
#pragma once
#include <string>
#include <vector>

#include "manifest/model.h"
#include "sys/fs.h"

namespace gp::apt {

// "deb [signed-by=/usr/share/keyrings/k.gpg] URL SUITE [COMPONENTS...]"
std::string ListLine(const manifest::AptRepository& repo);

// The whole list file: a header comment naming the stack, then ListLine.
std::string ListFileContents(const manifest::AptRepository& repo, const std::string& stack);

// "https://x/y/" -> "https://x/y" (trailing slashes do not make another repository for apt).
std::string NormalizeUrl(const std::string& url);

struct Conflict {
  std::string path;    // the file to move aside
  std::string reason;  // "names https://... with signed-by=/etc/apt/trusted.gpg.d/old.gpg"
};

// Files in /etc/apt/sources.list.d (*.list and deb822 *.sources) other than repo.list_path that name
// the same URL with another signed-by (or none): apt refuses to update with both present.
std::vector<Conflict> FindConflicts(const sys::Fs& fs, const manifest::AptRepository& repo);

// apt's file-name prefix for a repository's lists ("developer.download.nvidia.com_compute_..._").
std::string ListsPrefix(const manifest::AptRepository& repo);

}  // namespace gp::apt
