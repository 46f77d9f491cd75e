// The manifest front end: any bytes -> a Stack, Compat or Profile, or a gp::Error (PATH:LINE:COL). Never
// a crash, a hang or another exception type.
#include <cstddef>
#include <cstdint>
#include <string>

#include "manifest/loader.h"
#include "manifest/profile.h"
#include "manifest/stack_parse.h"
#include "manifest/tree.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    gp::manifest::Node root = gp::manifest::ParseTree(text, "fuzz.yaml");
    const gp::manifest::Node* kind =
        root.kind == gp::manifest::Node::Kind::kMap ? root.Find("kind") : nullptr;
    const std::string k = kind && kind->kind == gp::manifest::Node::Kind::kScalar ? kind->scalar : "";
    if (k == "Compat") {
      (void)gp::manifest::ParseCompat(text, "fuzz.yaml");
    } else if (k == "Profile") {
      (void)gp::manifest::ParseProfileDoc(text, "fuzz.yaml");
    } else {
      (void)gp::manifest::StackFromTree(root);
    }
    (void)gp::manifest::MergeTrees(root, root);
  } catch (const gp::Error&) {
  }
  return 0;
}
