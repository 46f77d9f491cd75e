#include "sys/dl.h"

namespace gp::sys {

DlHandle DlOpen(const char* soname) {
  DlHandle h;
  ::dlerror();
  h.handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!h.handle) {
    const char* e = ::dlerror();
    h.error = std::string("cannot load ") + soname + ": " + (e ? e : "unknown error");
  }
  return h;
}

}  // namespace gp::sys
