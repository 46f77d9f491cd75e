#include "launch/config.h"

namespace gp::launch {

const char* OriginName(Origin o) {
  switch (o) {
    case Origin::kDefault:
      return "default";
    case Origin::kStack:
      return "stack";
    case Origin::kProfile:
      return "profile";
    case Origin::kFlag:
      return "flag";
    case Origin::kHost:
      return "host";
  }
  return "default";
}

int GpuSelection::Number() const {
  switch (kind) {
    case Kind::kNone:
      return 0;
    case Kind::kDevices:
      return static_cast<int>(indices.size());
    case Kind::kAll:
    case Kind::kCount:
      return count;
  }
  return 0;
}

}  // namespace gp::launch
