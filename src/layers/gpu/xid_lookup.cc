// Look-ups over the generated Xid catalogue (xid_catalogue.cc).
#include <algorithm>

#include "layers/gpu/xid_catalogue.h"

namespace gp::layers {

const XidInfo* FindXid(int code) {
  const auto& t = XidCatalogue();
  auto it = std::lower_bound(t.begin(), t.end(), code, [](const XidInfo& x, int c) { return x.code < c; });
  return it != t.end() && it->code == code ? &*it : nullptr;
}

const char* XidClassName(XidClass c) {
  switch (c) {
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kMemory:
      return "memory";
    case XidClass::kFabric:
      return "fabric";
    case XidClass::kApplication:
      return "application";
    case XidClass::kDriver:
      return "driver";
    case XidClass::kMeta:
      return "meta";
    case XidClass::kUnused:
      return "unused";
  }
  return "unknown";
}

}  // namespace gp::layers
