#include "sys/dl.h"

namespace gp::sys {

DlHandle DlOpenFile(const std::string& file, int mode) {
  DlHandle h;
  ::dlerror();
  h.handle = ::dlopen(file.c_str(), mode);
  if (!h.handle) {
    if (const char* e = ::dlerror()) h.error = e;
  }
  return h;
}

DlHandle DlOpen(const char* soname) {
  DlHandle h = DlOpenFile(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h.handle)
    h.error = std::string("cannot load ") + soname + ": " + (h.error.empty() ? "unknown error" : h.error);
  return h;
}

}  // namespace gp::sys
