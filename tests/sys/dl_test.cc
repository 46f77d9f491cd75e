// sys/dl.h against the real loader: libm (always there) for a library that loads, a missing name for one
// that does not.
#include "sys/dl.h"

#include <catch2/catch.hpp>
#include <string>

using namespace gp::sys;

namespace {

// Each DlLoadOnce binds once per Api type: one type per case.
struct MathApi {
  void* handle = nullptr;
  std::string error;
  double (*cos)(double) = nullptr;
  double (*no_such)(double) = nullptr;  // optional: missing in every libm
};
bool BindMath(void* lib, MathApi& api) {
  DlBind(lib, "gpuprep_no_such_symbol", api.no_such);
  return DlBind(lib, "cos", api.cos);
}

struct LackingApi {
  void* handle = nullptr;
  std::string error;
  double (*missing)(double) = nullptr;
};
bool BindLacking(void* lib, LackingApi& api) { return DlBind(lib, "gpuprep_no_such_symbol", api.missing); }

struct AbsentApi {
  void* handle = nullptr;
  std::string error;
};
int binds_of_absent = 0;
bool BindAbsent(void*, AbsentApi&) {
  ++binds_of_absent;
  return true;
}

}  // namespace

TEST_CASE("dl: DlLoadOnce binds a library's symbols once, or says why it cannot", "[sys]") {
  const MathApi& m = DlLoadOnce("libm.so.6", "cos", BindMath);
  REQUIRE(m.handle != nullptr);
  CHECK(m.error.empty());
  REQUIRE(m.cos != nullptr);
  CHECK(m.cos(0.0) == 1.0);
  CHECK(m.no_such == nullptr);
  CHECK(&DlLoadOnce("libm.so.6", "cos", BindMath) == &m);  // the same value, bound once

  const LackingApi& l = DlLoadOnce("libm.so.6", "gpuprep_no_such_symbol", BindLacking);
  CHECK(l.handle == nullptr);
  CHECK(l.error == "libm.so.6 lacks gpuprep_no_such_symbol");

  const AbsentApi& a = DlLoadOnce("libgpuprep-absent.so.0", "anything", BindAbsent);
  CHECK(a.handle == nullptr);
  CHECK(a.error.rfind("cannot load libgpuprep-absent.so.0: ", 0) == 0);
  CHECK(a.error.find("libgpuprep-absent.so.0: cannot open shared object file") != std::string::npos);
  CHECK(binds_of_absent == 0);  // nothing to bind in a library that did not load
  DlLoadOnce("libgpuprep-absent.so.0", "anything", BindAbsent);
  CHECK(binds_of_absent == 0);
}

TEST_CASE("dl: DlOpenFile gives dlerror's own text; DlOpen prefixes the soname", "[sys]") {
  DlHandle f = DlOpenFile("/nonexistent/libgpuprep-absent.so.0", RTLD_LAZY | RTLD_LOCAL);
  CHECK(f.handle == nullptr);
  CHECK(f.error.rfind("/nonexistent/libgpuprep-absent.so.0: cannot open shared object file", 0) == 0);
  DlHandle o = DlOpen("libgpuprep-absent.so.0");
  CHECK(o.handle == nullptr);
  CHECK(o.error.rfind("cannot load libgpuprep-absent.so.0: libgpuprep-absent.so.0: cannot open", 0) == 0);
  DlHandle m = DlOpenFile("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
  CHECK(m.handle != nullptr);
  CHECK(m.error.empty());
}
