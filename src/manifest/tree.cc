#include "manifest/tree.h"

#include <yaml-cpp/yaml.h>

#include "util/error.h"

namespace gp::manifest {
namespace {

Mark MarkOf(const YAML::Mark& m, const std::shared_ptr<const std::string>& file) {
  Mark out;
  out.file = file;
  out.line = m.line >= 0 ? m.line + 1 : 1;
  out.col = m.column >= 0 ? m.column + 1 : 1;
  return out;
}

Node Convert(const YAML::Node& in, const std::shared_ptr<const std::string>& file, int depth) {
  Node out;
  out.mark = MarkOf(in.Mark(), file);
  if (depth > 64) throw FileError(*file, out.mark.line, out.mark.col, "nesting too deep");
  switch (in.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.kind = Node::Kind::kNull;
      break;
    case YAML::NodeType::Scalar:
      out.kind = Node::Kind::kScalar;
      out.scalar = in.Scalar();
      break;
    case YAML::NodeType::Sequence:
      out.kind = Node::Kind::kList;
      for (const auto& item : in) out.items.push_back(Convert(item, file, depth + 1));
      break;
    case YAML::NodeType::Map:
      out.kind = Node::Kind::kMap;
      for (const auto& kv : in) {
        Mark km = MarkOf(kv.first.Mark(), file);
        if (!kv.first.IsScalar()) throw FileError(*file, km.line, km.col, "a key must be a plain string");
        std::string key = kv.first.Scalar();
        if (out.Find(key))
          throw FileError(*file, km.line, km.col, "duplicate key \"" + key + "\"");
        Node value = Convert(kv.second, file, depth + 1);
        if (kv.second.Mark().is_null()) value.mark = km;  // `key:` with no value: point at the key
        out.fields.emplace_back(key, std::move(value));
        out.key_marks.push_back(km);
      }
      break;
  }
  return out;
}

}  // namespace

std::string Mark::str() const {
  return (file ? *file : std::string("?")) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

const Node* Node::Find(const std::string& key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

Node* Node::Find(const std::string& key) {
  for (auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

const Mark& Node::KeyMark(const std::string& key) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].first == key) return key_marks[i];
  return mark;
}

std::string KindName(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::kNull: return "nothing";
    case Node::Kind::kScalar: return "a string";
    case Node::Kind::kList: return "a list";
    case Node::Kind::kMap: return "a map";
  }
  return "?";
}

Node ParseTree(const std::string& text, const std::string& display_path) {
  auto file = std::make_shared<const std::string>(display_path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Mark m = MarkOf(e.mark, file);
    throw FileError(display_path, m.line, m.col, "YAML syntax error: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) throw FileError(display_path, 1, 1, "empty document");
  try {
    return Convert(root, file, 0);
  } catch (const YAML::Exception& e) {  // e.g. a bad alias found while walking
    Mark m = MarkOf(e.mark, file);
    throw FileError(display_path, m.line, m.col, "YAML error: " + e.msg);
  }
}

Node MergeTrees(const Node& parent, const Node& child) {
  if (parent.kind != Node::Kind::kMap || child.kind != Node::Kind::kMap) return child;
  Node out = parent;
  out.mark = child.mark;
  for (size_t i = 0; i < child.fields.size(); ++i) {
    const auto& [key, value] = child.fields[i];
    if (Node* mine = out.Find(key)) {
      *mine = MergeTrees(*mine, value);
      for (size_t j = 0; j < out.fields.size(); ++j)
        if (out.fields[j].first == key) out.key_marks[j] = child.key_marks[i];
    } else {
      out.fields.emplace_back(key, value);
      out.key_marks.push_back(child.key_marks[i]);
    }
  }
  return out;
}

}  // namespace gp::manifest
