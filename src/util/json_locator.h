// Where a value sits in a JSON text, for errors that point ("node.json:14:9: host.gpus[1].index: ...").
// nlohmann::json keeps no positions, so JsonLocator re-scans the (already valid) text once and records
// the line and column of every value under its dotted path: "" is the root, "host.gpus[1].index" a leaf.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace gp {

// 1-based line and column (in bytes) of `offset` in `text`; offsets past the end count as the end.
std::pair<int, int> LineColumnAt(const std::string& text, size_t offset);

// The human part of an nlohmann parse_error what(): "[json.exception.parse_error.101] parse error at
// line 1, column 5: syntax error ..." -> "syntax error ...".
std::string ParseErrorReason(const std::string& what);

// Where the number an nlohmann out_of_range error quotes ("number overflow parsing '1e400'") first starts in
// `text`, as an offset (nlohmann throws it without a position); 0 when the message quotes none found there.
size_t OverflowNumberAt(std::string_view text, const std::string& what);
// The message of such an error without its "[json.exception.out_of_range.406] " prefix.
std::string ExceptionReason(const std::string& what);

// Offset of the first '[' or '{' that opens a level deeper than `max_depth` (strings skipped); nullopt
// when the text stays within it. Run before nlohmann::json::parse, whose recursion (parse, copy, destroy)
// a deeply nested text would otherwise exhaust.
std::optional<size_t> JsonTooDeepAt(const std::string& text, int max_depth);

class JsonLocator {
 public:
  // `text` must be valid JSON (parse it with nlohmann first); on malformed text the map is partial.
  explicit JsonLocator(const std::string& text);
  // Line and column of the value at `path`; for a path that does not exist (a missing key), the nearest
  // existing ancestor's position; {1, 1} when nothing matches.
  std::pair<int, int> Find(const std::string& path) const;

 private:
  std::unordered_map<std::string, std::pair<int, int>> positions_;
};

}  // namespace gp
