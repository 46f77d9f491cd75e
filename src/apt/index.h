// apt's package index as data: every version of every package that a repository's Packages file (as apt
// downloaded it into its lists directory) or the dpkg status file describes, with the relations gpuprep
// follows (Depends, Pre-Depends, Provides). Pure parsing: files are read through sys::Fs by the caller.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "manifest/model.h"
#include "sys/fs.h"

namespace gp::apt {

// One relation of a Depends field: "libnvidia-gl-580 (= 580.95.05-0ubuntu1)".
struct Relation {
  std::string name;         // without an ":any" / ":amd64" qualifier
  std::string op;           // "" (any version), "=", ">=", "<=", ">>", "<<"
  std::string version;      // "" when op is ""
  std::string str() const;  // "name (op version)" as apt prints it
};
using Clause = std::vector<Relation>;  // alternatives: "a | b"

// "a (>= 1), b | c:any (= 2)" -> {{a>=1}, {b, c=2}}. Malformed relations are dropped (apt would refuse
// the repository; gpuprep only reads it).
std::vector<Clause> ParseRelations(std::string_view field);
// dpkg's satisfaction rule for one relation (the name is not compared).
bool Satisfies(const std::string& version, const Relation& r);

struct Candidate {
  std::string version;
  std::string architecture;     // "amd64", "all"
  std::vector<Clause> depends;  // Depends and Pre-Depends
  std::vector<std::string> provides;
};

class Index {
 public:
  // Adds a version of `name`; an identical version already present (the same file seen twice, or two
  // origins carrying the same build) is kept once. Constant time on average: the versions are put in order
  // once, when they are next looked up (n log n in all, where inserting each in place was quadratic).
  void Add(const std::string& name, Candidate c);
  // Every version of `name`, highest first; nullptr when the index has none.
  const std::vector<Candidate>* Find(const std::string& name) const;
  const Candidate* Find(const std::string& name, const std::string& version) const;
  // Real packages that provide the virtual `name`.
  std::vector<std::string> Providers(const std::string& name) const;
  bool empty() const { return packages_.empty(); }
  size_t size() const { return packages_.size(); }
  // Every package name (sorted).
  std::vector<std::string> Names() const;

 private:
  struct Versions {
    std::vector<Candidate> list;          // highest first once `sorted`; before, in the order added
    std::unordered_set<std::string> ids;  // version '\n' architecture, each once
    bool sorted = true;
  };
  const std::vector<Candidate>& Sorted(Versions& v) const;
  // Sorted on look-up (an Index is read from one thread at a time).
  mutable std::map<std::string, Versions> packages_;
  std::map<std::string, std::vector<std::string>> providers_;
};

// Adds every stanza of a Packages file whose Architecture is `arch` or "all" (`arch` "" accepts any). A
// stanza whose Package is not a Debian package name or whose Version is not a Debian version (util/input.h)
// is dropped, and so is a relation naming one: what reaches apt's command line is validated here.
void ParsePackages(std::string_view text, const std::string& arch, Index& index);

// The Packages files of `repo` in an apt lists directory ("/var/lib/apt/lists", or a private one):
// host paths through `fs`. Empty when apt has not fetched the repository there.
std::vector<std::string> PackagesFiles(const sys::Fs& fs, const manifest::AptRepository& repo,
                                       const std::string& lists_dir = "/var/lib/apt/lists");

// The index of `repos` from `lists_dir`. `complete` is false when one of them has no Packages file there
// (the index then cannot be trusted to name every version).
struct RepoIndex {
  Index index;
  bool complete = false;
  std::string lists_dir;
};
RepoIndex ReadRepoIndex(const sys::Fs& fs, const std::vector<const manifest::AptRepository*>& repos,
                        const std::string& arch, const std::string& lists_dir = "/var/lib/apt/lists");

// dpkg's architecture name for a kernel machine name: x86_64 -> amd64, aarch64 -> arm64 ("" when unknown).
std::string DpkgArch(const std::string& machine);

}  // namespace gp::apt
