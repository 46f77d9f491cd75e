// The order-preserving JSON tree daemon.json is edited in, read and written in bounded time and memory: the
// text's size and nesting are checked before it is parsed, members are indexed while it is read (a
// duplicate key keeps its first place and takes the last value, as nlohmann::ordered_json::parse does, but in
// linear time: ordered_json's own parse looks every key up with a linear scan), and the writer keeps its own
// stack (no recursion, whatever the depth). Pure; tested in tests/docker/json_tree_test.cc, fuzzed by
// fuzz/fuzz_daemon_json.cc.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace gp::docker {

using nlohmann::ordered_json;

inline constexpr size_t kMaxDaemonJsonBytes = 1u << 20;  // 1 MiB: Docker's own files are a few KiB
inline constexpr int kMaxDaemonJsonDepth = 32;           // levels of objects and arrays, the root is level 1

// `text` as one JSON value. Throws gp::FileError("PATH:LINE:COL: ...", exit 2) when it is longer than
// kMaxDaemonJsonBytes (at the first byte past the limit), nests deeper than kMaxDaemonJsonDepth (at the
// bracket that opens the level too many) or is not JSON (where nlohmann's parser stopped).
ordered_json ReadJsonTree(const std::string& text, const std::string& display_path);

// The same text as ordered_json::dump(4): 4-space indent, "key": value, empty containers as {} and [],
// strings as nlohmann escapes them; no trailing newline.
std::string WriteJsonTree(const ordered_json& v);

}  // namespace gp::docker
