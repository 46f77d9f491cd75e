#include "manifest/prebuilt.h"

#include <memory>
#include <string>

namespace gp::manifest {

Node PrebuiltNode(const prebuilt::RawNode& raw, const std::shared_ptr<const std::string>& file) {
  Node n;
  n.kind = static_cast<Node::Kind>(raw.kind);
  n.mark.file = file;
  n.mark.line = raw.line;
  n.mark.col = raw.col;
  if (n.kind == Node::Kind::kScalar) n.scalar.assign(prebuilt::ScalarOf(raw));
  const prebuilt::RawNode* child = prebuilt::kNodes + raw.first;
  if (n.kind == Node::Kind::kList) {
    n.items.reserve(raw.count);
    for (unsigned i = 0; i < raw.count; ++i) n.items.push_back(PrebuiltNode(child[i], file));
  } else if (n.kind == Node::Kind::kMap) {
    n.fields.reserve(raw.count);
    n.key_marks.reserve(raw.count);
    for (unsigned i = 0; i < raw.count; ++i) {
      n.fields.emplace_back(std::string(prebuilt::KeyOf(child[i])), PrebuiltNode(child[i], file));
      Mark km;
      km.file = file;
      km.line = child[i].key_line;
      km.col = child[i].key_col;
      n.key_marks.push_back(std::move(km));
    }
  }
  return n;
}

const prebuilt::RawNode* PrebuiltRoot(std::string_view path) {
  for (const prebuilt::RawTree* t = prebuilt::kTrees; t->path; ++t)
    if (path == t->path) return &prebuilt::kNodes[t->root];
  return nullptr;
}

std::optional<Node> PrebuiltTree(std::string_view path) {
  const prebuilt::RawNode* root = PrebuiltRoot(path);
  if (!root) return std::nullopt;
  return PrebuiltNode(*root, std::make_shared<const std::string>(std::string(path)));
}

}  // namespace gp::manifest
