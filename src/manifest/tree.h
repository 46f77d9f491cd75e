// A YAML document as plain values with source positions (private to src/manifest/). tree.cc is the only
// file that touches yaml-cpp; the parsers and the `extends:` merge work on these nodes, so every value
// keeps the file, line and column it came from, across merged files.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gp::manifest {

struct Mark {
  std::shared_ptr<const std::string> file;  // display path, as the user gave it
  int line = 1;                             // 1-based
  int col = 1;                              // 1-based
  std::string str() const;                  // "site.yaml:3:7"
};

struct Node {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;                                // kScalar
  std::vector<Node> items;                           // kList
  std::vector<std::pair<std::string, Node>> fields;  // kMap, in file order
  std::vector<Mark> key_marks;                       // kMap: where each key is written
  Mark mark;                                         // where the value starts

  const Node* Find(const std::string& key) const;  // nullptr when absent
  Node* Find(const std::string& key);
  const Mark& KeyMark(const std::string& key) const;  // the key's own position (mark when absent)
};

// "a string", "a list", "a map", "nothing" (for "expected X, got Y" messages).
std::string KindName(Node::Kind kind);

// The largest manifest or profile gpuprep reads (the shipped ones are under 16 KiB).
constexpr size_t kMaxManifestBytes = size_t{1} << 20;

// Parses one YAML document, a map (every gpuprep document is one). Throws gp::FileError on syntax errors
// (yaml-cpp's mark, made 1-based), on a document that is not a map (without its text), on duplicate keys, on
// non-scalar keys and on anchors/aliases/tags that gpuprep does not support, on invalid UTF-8 and control
// characters (tab and newline allowed in values), on nesting deeper than 64, on a value over 64 KiB, more
// than 100000 values, or a text over kMaxManifestBytes.
Node ParseTree(const std::string& text, const std::string& display_path);

// Deep merge for `extends:`: maps merge key by key (child wins), anything else is replaced by the child.
Node MergeTrees(const Node& parent, const Node& child);

}  // namespace gp::manifest
