// A fresh directory under /tmp for one test, removed with everything below it (sys::RemoveTree: any depth).
#pragma once
#include <stdlib.h>

#include <string>

#include "sys/tree.h"

namespace gp::test {

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/gpuprep-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { sys::RemoveTree(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path;
};

}  // namespace gp::test
