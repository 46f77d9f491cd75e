#include "manifest/tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "util/error.h"
#include "util/input.h"

namespace gp::manifest {
namespace {

Mark MarkOf(const YAML::Mark& m, const std::shared_ptr<const std::string>& file) {
  Mark out;
  out.file = file;
  out.line = m.line >= 0 ? m.line + 1 : 1;
  out.col = m.column >= 0 ? m.column + 1 : 1;
  return out;
}

// Builds Nodes straight from yaml-cpp's parser events: no yaml-cpp node graph is built, which makes
// parsing about twice as fast (compat.yaml is read on every doctor run).
class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(std::shared_ptr<const std::string> file) : file_(std::move(file)) {}
  Node TakeRoot() { return std::move(root_); }
  bool HasRoot() const { return has_root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override {
    CheckAnchor(m, a);
    Node n;
    n.mark = MarkOf(m, file_);
    Add(std::move(n), /*null_value=*/true);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Unsupported(m, "aliases (*name)"); }
  void OnAnchor(const YAML::Mark& m, const std::string&) override { Unsupported(m, "anchors (&name)"); }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a,
                const std::string& value) override {
    CheckAnchor(m, a);
    CheckTag(m, tag);
    CheckText(MarkOf(m, file_), value);
    Node n;
    n.kind = Node::Kind::kScalar;
    n.scalar = value;
    n.mark = MarkOf(m, file_);
    Add(std::move(n), false);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    Open(m, tag, a, Node::Kind::kList);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a,
                  YAML::EmitterStyle::value) override {
    Open(m, tag, a, Node::Kind::kMap);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Open_ {
    Node node;
    bool want_key = true;  // maps: the next event is a key
    std::string key;       // maps: the key waiting for its value
    Mark key_mark;
  };

  [[noreturn]] void Fail(const Mark& m, const std::string& msg) {
    throw FileError(*file_, m.line, m.col, msg);
  }
  [[noreturn]] void Unsupported(const YAML::Mark& m, const char* what) {
    Fail(MarkOf(m, file_), std::string("YAML ") + what + " are not supported in gpuprep manifests");
  }
  void CheckAnchor(const YAML::Mark& m, YAML::anchor_t a) {
    if (a != YAML::NullAnchor) Unsupported(m, "anchors (&name)");
  }
  void CheckTag(const YAML::Mark& m, const std::string& tag) {
    if (!tag.empty() && tag != "?" && tag != "!")
      Fail(MarkOf(m, file_), "YAML tags (" + QuoteToken(tag) + ") are not supported");
  }

  // Every value is valid UTF-8 without control characters (tab and newline allowed in text); a key or a
  // value that reaches a shell, an apt line or a terminal gets a stricter check where it is read.
  void CheckText(const Mark& at, const std::string& value) {
    if (auto bad = InvalidUtf8At(value))
      Fail(at, "invalid UTF-8 (byte " + std::to_string(*bad + 1) + " of the value)");
    if (auto ctl = ControlCharAt(value, /*allow_text=*/true))
      Fail(at, "control character " + TerminalSafe(value.substr(*ctl, 1)) + " in a value (byte " +
                   std::to_string(*ctl + 1) + ")");
    if (value.size() > kMaxScalar) Fail(at, "value longer than " + std::to_string(kMaxScalar) + " bytes");
    if (++scalars_ > kMaxNodes)
      Fail(at, "more than " + std::to_string(kMaxNodes) + " values in one document");
  }

  void Open(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a, Node::Kind kind) {
    CheckAnchor(m, a);
    CheckTag(m, tag);
    Mark mark = MarkOf(m, file_);
    if (!stack_.empty() && stack_.back().node.kind == Node::Kind::kMap && stack_.back().want_key)
      Fail(mark, "a key must be a plain string");
    if (stack_.size() > 64) Fail(mark, "nesting too deep");
    Open_ o;
    o.node.kind = kind;
    o.node.mark = mark;
    stack_.push_back(std::move(o));
  }

  void Close() {
    Node done = std::move(stack_.back().node);
    stack_.pop_back();
    Add(std::move(done), false);
  }

  void Add(Node n, bool null_value) {
    if (stack_.empty()) {
      root_ = std::move(n);
      has_root_ = true;
      return;
    }
    Open_& top = stack_.back();
    if (top.node.kind == Node::Kind::kList) {
      top.node.items.push_back(std::move(n));
      return;
    }
    if (top.want_key) {
      if (n.kind != Node::Kind::kScalar) Fail(n.mark, "a key must be a plain string");
      if (ControlCharAt(n.scalar)) Fail(n.mark, "control character in a key");
      if (top.node.Find(n.scalar)) Fail(n.mark, "duplicate key " + QuoteToken(n.scalar));
      top.key = std::move(n.scalar);
      top.key_mark = n.mark;
      top.want_key = false;
      return;
    }
    if (null_value) n.mark = top.key_mark;  // `key:` with no value: point at the key
    top.node.fields.emplace_back(std::move(top.key), std::move(n));
    top.node.key_marks.push_back(top.key_mark);
    top.want_key = true;
  }

  static constexpr size_t kMaxScalar = size_t{64} << 10;
  static constexpr size_t kMaxNodes = 100000;
  std::shared_ptr<const std::string> file_;
  size_t scalars_ = 0;
  std::vector<Open_> stack_;
  Node root_;
  bool has_root_ = false;
};

// yaml-cpp's message. Its text after ": ", when there is one, is the offending character or word of the file
// ("unknown escape character: X", "bad YAML version: X"): that part is quoted, cut and escaped.
std::string SyntaxMessage(const std::string& msg) {
  const size_t sep = msg.find(": ");
  return sep == std::string::npos ? TerminalSafe(msg)
                                  : msg.substr(0, sep + 2) + QuoteToken(msg.substr(sep + 2));
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
    case Node::Kind::kNull:
      return "nothing";
    case Node::Kind::kScalar:
      return "a string";
    case Node::Kind::kList:
      return "a list";
    case Node::Kind::kMap:
      return "a map";
  }
  return "?";
}

Node ParseTree(const std::string& text, const std::string& display_path) {
  if (text.size() > kMaxManifestBytes)
    throw FileError(
        display_path, 1, 1,
        "file is larger than the " + std::to_string(kMaxManifestBytes / 1024) + " KiB limit for manifests");
  auto file = std::make_shared<const std::string>(display_path);
  std::istringstream in(text);
  TreeBuilder builder(file);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(builder);
  } catch (const YAML::Exception& e) {
    Mark m = MarkOf(e.mark, file);
    throw FileError(display_path, m.line, m.col, "YAML syntax error: " + SyntaxMessage(e.msg));
  }
  if (!builder.HasRoot()) throw FileError(display_path, 1, 1, "empty document");
  Node root = builder.TakeRoot();
  if (root.kind == Node::Kind::kNull) throw FileError(display_path, 1, 1, "empty document");
  // Not a gpuprep document (a private key, a certificate read as YAML is one string): said without its text.
  if (root.kind != Node::Kind::kMap)
    throw FileError(
        display_path, root.mark.line, root.mark.col,
        "expected a gpuprep document (a map with apiVersion and kind), got " + KindName(root.kind));
  return root;
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
