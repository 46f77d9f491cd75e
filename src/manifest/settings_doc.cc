#include "manifest/settings_doc.h"

#include <algorithm>

#include "manifest/fields.h"
#include "manifest/tree.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {
namespace {

// The names one level below `prefix` ("" for the document) among the dotted leaves.
std::vector<std::string> Children(const std::vector<std::string>& leaves, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& leaf : leaves) {
    if (!prefix.empty() && leaf.rfind(prefix + ".", 0) != 0) continue;
    const std::string rest = prefix.empty() ? leaf : leaf.substr(prefix.size() + 1);
    const std::string head = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), head) == out.end()) out.push_back(head);
  }
  return out;
}

std::string Scalar(const Node& n, const std::string& key) {
  if (n.kind == Node::Kind::kScalar) return AsLine(n);
  if (n.kind == Node::Kind::kList) {
    std::vector<std::string> items;
    for (const Node& item : n.items) {
      if (item.kind != Node::Kind::kScalar) Fail(item.mark, key + ": expected a list of plain values");
      std::string v = AsLine(item);
      if (v.find(',') != std::string::npos) Fail(item.mark, key + ": a list item cannot contain ','");
      items.push_back(v);
    }
    return Join(items, ",");
  }
  Fail(n.mark, key + ": expected a value, got " + KindName(n.kind));
}

void Walk(const Node& map, const std::string& prefix, const std::vector<std::string>& leaves,
          SettingsDoc& doc) {
  const std::vector<std::string> names = Children(leaves, prefix);
  for (size_t i = 0; i < map.fields.size(); ++i) {
    const auto& [name, value] = map.fields[i];
    if (prefix.empty() && (name == "apiVersion" || name == "kind" || name == "metadata")) continue;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (std::find(names.begin(), names.end(), name) == names.end())
      Fail(map.key_marks[i], "unknown key " + QuoteToken(key) + Suggestion(name, names, "expected one of"));
    if (std::find(leaves.begin(), leaves.end(), key) != leaves.end()) {
      if (value.kind == Node::Kind::kNull) continue;  // `key:` with no value keeps the default
      doc.settings.push_back({key, Scalar(value, key), value.mark.line, value.mark.col});
      continue;
    }
    if (value.kind != Node::Kind::kMap)
      Fail(value.mark, key + ": expected a map, got " + KindName(value.kind));
    Walk(value, key, leaves, doc);
  }
}

}  // namespace

SettingsDoc ParseSettingsDoc(const std::string& text, const std::string& display_path,
                             const std::string& kind, const std::vector<std::string>& leaves) {
  Node root = ParseTree(text, display_path);
  Fields top(root, "", nullptr);
  CheckHeader(top, {kind});
  SettingsDoc doc;
  Fields meta(top.Require("metadata"), "metadata", nullptr);
  meta.Only({"name", "description"});
  doc.name = AsName(meta.Require("name"), ToLower(kind) + " name");
  doc.description = meta.String("description").value_or("");
  Walk(root, "", leaves, doc);
  return doc;
}

}  // namespace gp::manifest
