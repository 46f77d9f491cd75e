#include "manifest/fields.h"

#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::manifest {

void Fail(const Mark& at, const std::string& message) {
  throw FileError(at.file ? *at.file : std::string("?"), at.line, at.col, message);
}

namespace {
void Expect(const Node& n, Node::Kind kind, const char* what) {
  if (n.kind == kind) return;
  std::string got = n.kind == Node::Kind::kScalar ? QuoteToken(n.scalar) : KindName(n.kind);
  Fail(n.mark, std::string("expected ") + what + ", got " + got);
}
}  // namespace

std::string AsString(const Node& n) {
  Expect(n, Node::Kind::kScalar, "a string");
  return n.scalar;
}

long long AsInt(const Node& n) {
  Expect(n, Node::Kind::kScalar, "a whole number");
  auto v = ParseUnsigned(n.scalar);
  if (!v || *v > 1000000000000ULL) Fail(n.mark, "expected a whole number, got " + QuoteToken(n.scalar));
  return static_cast<long long>(*v);
}

bool AsBool(const Node& n) {
  Expect(n, Node::Kind::kScalar, "true or false");
  if (n.scalar == "true") return true;
  if (n.scalar == "false") return false;
  Fail(n.mark, "expected true or false, got " + QuoteToken(n.scalar));
}

Version AsVersion(const Node& n) {
  Expect(n, Node::Kind::kScalar, "a version");
  auto v = Version::Parse(n.scalar);
  if (!v) Fail(n.mark, QuoteToken(n.scalar) + " is not a version");
  return *v;
}

const std::vector<Node>& AsList(const Node& n) {
  Expect(n, Node::Kind::kList, "a list");
  return n.items;
}

unsigned long long AsBytes(const Node& n) {
  Expect(n, Node::Kind::kScalar, "a size");
  auto v = ParseBytes(n.scalar);
  if (!v) Fail(n.mark, QuoteToken(n.scalar) + " is not a size (examples: 128GiB, 64m, 1073741824)");
  return *v;
}

uint64_t AsSize(const Node& n) {
  Expect(n, Node::Kind::kScalar, "a size");
  uint64_t v = 0;
  if (!ParseSize(n.scalar, &v))
    Fail(n.mark,
         QuoteToken(n.scalar) + " is not a size (examples: 256GB, 256GiB, 0)" + BareUnitHint(n.scalar));
  return v;
}

std::vector<std::string> AsStringList(const Node& n) {
  std::vector<std::string> out;
  for (const Node& item : AsList(n)) out.push_back(AsString(item));
  return out;
}

std::string AsLine(const Node& n) {
  std::string v = AsString(n);
  if (ControlCharAt(v)) Fail(n.mark, "expected one line, got a value with a line break or control character");
  if (v.size() > 1024) Fail(n.mark, "value longer than 1024 bytes");
  return v;
}

std::string AsName(const Node& n, const std::string& what) {
  std::string v = AsLine(n);
  if (!ValidName(v))
    Fail(n.mark, what + " " + QuoteToken(v) +
                     " is not a valid name (letters, digits and . _ + ~ -, starting with a "
                     "letter or digit, at most 128)");
  return v;
}

std::string AsDebName(const Node& n) {
  std::string v = AsLine(n);
  if (!ValidDebName(v)) Fail(n.mark, QuoteToken(v) + " is not a Debian package name ([a-z0-9][a-z0-9+.-]+)");
  return v;
}

std::string AsDebVersion(const Node& n) {
  std::string v = AsLine(n);
  if (!ValidDebVersion(v))
    Fail(n.mark,
         QuoteToken(v) + " is not a Debian version ([epoch:]upstream[-revision], starting with a digit)");
  return v;
}

std::string AsUrl(const Node& n, UrlRuleKind rule) {
  std::string v = AsLine(n);
  std::string why = CheckUrl(v, rule == UrlRuleKind::kApt ? UrlRule::kApt : UrlRule::kFetch);
  if (!why.empty()) Fail(n.mark, QuoteToken(v) + ": " + why);
  return v;
}

std::string AsConfinedPath(const Node& n, const std::vector<std::string>& dirs) {
  std::string v = AsLine(n);
  std::string why = CheckConfinedPath(v, dirs);
  if (!why.empty()) Fail(n.mark, QuoteToken(v) + ": " + why);
  return v;
}

Fields::Fields(const Node& node, std::string path, Origins* origins)
    : node_(node), path_(std::move(path)), origins_(origins) {
  Expect(node, Node::Kind::kMap, "a map");
}

std::string Suggestion(const std::string& word, const std::vector<std::string>& names,
                       const std::string& label) {
  if (auto guess = DidYouMean(word, names)) return " (did you mean \"" + *guess + "\"?)";
  return " (" + label + ": " + Join(names, ", ") + ")";
}

Fields& Fields::Only(std::initializer_list<const char*> known) {
  std::vector<std::string> names(known.begin(), known.end());
  for (size_t i = 0; i < node_.fields.size(); ++i) {
    const std::string& key = node_.fields[i].first;
    bool ok = false;
    for (const auto& k : names) ok = ok || k == key;
    if (ok) continue;
    Fail(node_.key_marks[i], "unknown key " + QuoteToken(key) + Suggestion(key, names, "expected one of"));
  }
  return *this;
}

const Node* Fields::Get(const std::string& key) {
  const Node* n = node_.Find(key);
  if (!n || n->kind == Node::Kind::kNull) return nullptr;
  if (origins_) (*origins_)[Child(key)] = n->mark.str();
  return n;
}

const Node& Fields::Require(const std::string& key) {
  if (const Node* n = Get(key)) return *n;
  std::string where = path_.empty() ? "" : path_ + ": ";
  const Node* present = node_.Find(key);
  Fail(present ? present->mark : node_.mark, where + "missing required key " + QuoteToken(key));
}

std::optional<std::string> Fields::String(const std::string& key) {
  const Node* n = Get(key);
  return n ? std::optional<std::string>(AsString(*n)) : std::nullopt;
}

std::optional<long long> Fields::Int(const std::string& key) {
  const Node* n = Get(key);
  return n ? std::optional<long long>(AsInt(*n)) : std::nullopt;
}

std::optional<bool> Fields::Bool(const std::string& key) {
  const Node* n = Get(key);
  return n ? std::optional<bool>(AsBool(*n)) : std::nullopt;
}

std::optional<Version> Fields::VersionOf(const std::string& key) {
  const Node* n = Get(key);
  return n ? std::optional<Version>(AsVersion(*n)) : std::nullopt;
}

}  // namespace gp::manifest

namespace gp::manifest {
std::string CheckHeader(Fields& doc, const std::vector<std::string>& kinds) {
  const Node& api = doc.Require("apiVersion");
  if (AsString(api) != "gpuprep/v1")
    Fail(api.mark, "apiVersion must be \"gpuprep/v1\", got " + QuoteToken(api.scalar));
  const Node& kind = doc.Require("kind");
  std::string k = AsString(kind);
  for (const auto& want : kinds)
    if (k == want) return k;
  if (kinds.size() == 1) Fail(kind.mark, "kind must be \"" + kinds[0] + "\", got " + QuoteToken(k));
  std::string msg = "unknown kind " + QuoteToken(k);
  if (auto guess = DidYouMean(k, kinds))
    msg += " (did you mean \"" + *guess + "\"?)";
  else
    msg += " (expected one of: " + Join(kinds, ", ") + ")";
  Fail(kind.mark, msg);
}
}  // namespace gp::manifest
