// Typed, position-aware reading of manifest nodes (private to src/manifest/). Every error is a
// gp::FileError at the offending value, with the messages tested word for word in tests/manifest/:
//   unknown key "drivr" (did you mean "driver"?)      expected a list, got a string
//   "535.x" is not a version                           driver: missing required key "branch"
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "manifest/tree.h"

namespace gp::manifest {

enum class UrlRuleKind { kFetch, kApt };  // util/input.h UrlRule: keyrings vs apt repositories

[[noreturn]] void Fail(const Mark& at, const std::string& message);

std::string AsString(const Node& n);  // a scalar
long long AsInt(const Node& n);       // a whole number
bool AsBool(const Node& n);           // true/false
Version AsVersion(const Node& n);     // dotted numbers ("535.129.03")
const std::vector<Node>& AsList(const Node& n);
unsigned long long AsBytes(const Node& n);  // Docker's reading, for shm: "128GiB", "64m", 1073741824
uint64_t AsSize(const Node& n);             // every other size: "256GB" (10^9), "256GiB" (2^30); no bare "G"
std::vector<std::string> AsStringList(const Node& n);
// Typed strings for values that reach a shell, an apt source line, a path or a terminal (util/input.h):
std::string AsLine(const Node& n);  // one line: no control characters at all, at most 1024 bytes
std::string AsName(const Node& n, const std::string& what);  // [A-Za-z0-9][A-Za-z0-9._+~-]{0,127}
std::string AsDebName(const Node& n);                        // a Debian package name
std::string AsDebVersion(const Node& n);                     // a Debian version
std::string AsUrl(const Node& n, UrlRuleKind rule);
std::string AsConfinedPath(const Node& n, const std::vector<std::string>& dirs);

// What follows an "unknown X" message: ` (did you mean "y"?)` when one of `names` is close, else
// ` (LABEL: a, b, c)`, e.g. LABEL "expected one of".
std::string Suggestion(const std::string& word, const std::vector<std::string>& names,
                       const std::string& label);

// One map of a document: rejects unknown keys, reads fields and records where each came from.
class Fields {
 public:
  // `node` must be a map; `path` is its dotted name ("" for the document, "driver", "cuda").
  Fields(const Node& node, std::string path, Origins* origins);
  // Throws `unknown key "x" (did you mean "y"?)` for the first key not in `known`.
  Fields& Only(std::initializer_list<const char*> known);
  const Node* Get(const std::string& key);      // nullptr when absent or null; records the origin
  const Node& Require(const std::string& key);  // throws `PATH: missing required key "key"`
  const Node& node() const { return node_; }
  std::string Child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  std::optional<std::string> String(const std::string& key);
  std::optional<long long> Int(const std::string& key);
  std::optional<bool> Bool(const std::string& key);
  std::optional<Version> VersionOf(const std::string& key);

 private:
  const Node& node_;
  std::string path_;
  Origins* origins_;
};

}  // namespace gp::manifest

namespace gp::manifest {
// Checks `apiVersion: gpuprep/v1` and that `kind` is one of `kinds`; returns the kind. Errors:
//   apiVersion must be "gpuprep/v1", got "gpuprep/v2"      kind must be "Stack", got "Stak"
std::string CheckHeader(Fields& doc, const std::vector<std::string>& kinds);
}  // namespace gp::manifest
