// The tests' one temporary directory: TempDir, a fresh directory under /tmp for one test (or one fixture
// object), removed with everything below it when it goes (sys::RemoveTree: any depth, links not followed),
// and Write, which puts a file anywhere below it.
#pragma once
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "sys/tree.h"

namespace gp::test {

// mkdtemp's directory: /tmp/PREFIX-XXXXXX, mode 0700 (a test that lets another user in chmods it).
struct TempDir {
  explicit TempDir(const std::string& prefix = "gpuprep-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path = tmpl;
  }
  ~TempDir() { sys::RemoveTree(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to the file `rel` names below the directory ("/etc/x" and "etc/x" are the same file),
  // replacing it, and makes its missing parent directories (0755) first. Returns the file's full path.
  std::string Write(const std::string& rel, const std::string& text) const {
    const std::string full = path + (rel.compare(0, 1, "/") == 0 ? "" : "/") + rel;
    for (size_t i = path.size() + 1; i < full.size(); ++i)
      if (full[i] == '/') ::mkdir(full.substr(0, i).c_str(), 0755);
    std::ofstream out(full, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + full);
    return full;
  }

  std::string path;
};

}  // namespace gp::test
