// Checks for values that come from outside (manifests, profiles, probed files, snapshots) before they
// reach a shell, an apt source line, a path or a terminal. Pure functions; tested in tests/util/input_test.cc
// and fuzzed in fuzz/.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp {

// Offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms, surrogates
// and code points above U+10FFFF are ill-formed); nullopt when `s` is valid UTF-8.
std::optional<size_t> InvalidUtf8At(std::string_view s);

// `s` with every ill-formed byte replaced by U+FFFD; `replaced` (when given) counts them.
std::string ReplaceInvalidUtf8(std::string_view s, size_t* replaced = nullptr);

// Offset of the first control character: C0 (U+0000..U+001F), DEL and C1 (U+0080..U+009F, as UTF-8).
// `allow_text` permits tab and newline (multi-line descriptions). nullopt when there is none.
std::optional<size_t> ControlCharAt(std::string_view s, bool allow_text = false);

// Offset of the first bidirectional formatting control: LRE, RLE, PDF, LRO, RLO (U+202A..U+202E) and LRI,
// RLI, FSI, PDI (U+2066..U+2069), which reorder the text after them on screen (Unicode UAX #9, section 2).
// nullopt when there is none.
std::optional<size_t> BidiControlAt(std::string_view s);

// `s` made safe to print on a terminal, one line, in one escape form: the control characters (C0, DEL and
// C1) and the bidirectional formatting controls above are escaped, as \n, \t, \r and \e for those four and
// otherwise as the bytes that encode the character, \xNN each in upper-case hex (U+009B is \xC2\x9B, U+202E
// is \xE2\x80\xAE); a byte that is not well-formed UTF-8 is \xNN too. A backslash stays a backslash, and
// everything else is unchanged. Every text gpuprep prints from outside (snapshots, recordings, probed files,
// program output, manifests, server answers) goes through it.
std::string TerminalSafe(std::string_view s);

// A label value for the Prometheus text exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/): TerminalSafe first (one line of valid
// UTF-8, whatever the value was), then the format's escapes: \ as \\, " as \", line feed as \n.
std::string PrometheusLabelValue(std::string_view s);

// A name gpuprep passes on (stack, repository, component, OS id): [A-Za-z0-9][A-Za-z0-9._+~-]{0,127}.
bool ValidName(std::string_view s);

// A Debian package name (Debian Policy 5.6.1): [a-z0-9][a-z0-9+.-]+, at most 128 characters.
bool ValidDebName(std::string_view s);

// A Debian version (Debian Policy 5.6.12, at most 128 characters): [epoch:]upstream[-revision], the epoch
// digits, the upstream part starting with a digit and made of [A-Za-z0-9.+~-], the revision (after the last
// hyphen) of [A-Za-z0-9.+~]. Never starts with '-', so never an option word.
bool ValidDebVersion(std::string_view s);

// A package word on an apt-get, apt-mark or dpkg command line: NAME or NAME=VERSION, each valid as above.
bool ValidPackageWord(std::string_view s);

// An IPv6 address as inet_pton(AF_INET6) reads it (RFC 4291 section 2.2; what libcurl checks a bracketed
// host with): up to eight groups of 1-4 hex digits, at most one "::" standing for one or more zero groups,
// optionally a dotted IPv4 address in the last 32 bits ("::ffff:192.0.2.1"). No zone id.
bool ValidIpv6(std::string_view s);

// A URL as gpuprep reads it (RFC 3986 subset): scheme "://" [host [":" port]] path. User information
// ("user@"), whitespace, control characters, a fragment and percent-encoded host names are refused, and so
// are a bracketed host that is not an IPv6 address and a numeric IPv4 host in any spelling but four decimal
// octets (libcurl would read "127.1" or "010.0.0.1" as an address). docs/values.md lists the differences.
struct Url {
  std::string scheme;  // lower-case: "https", "http", "file"
  std::string host;    // lower-case; "[::1]" keeps its brackets; "" for file:///
  std::string port;    // digits, "" when absent
  std::string path;    // from the first '/' after the authority, including any query
};
// Parses `s`; on failure returns nullopt and says why in `why` ("user information (user@) is not allowed").
std::optional<Url> ParseUrl(std::string_view s, std::string* why = nullptr);

// Host names that always mean this machine: "localhost", 127.x.y.z (four decimal octets) and "[::1]".
bool IsLoopbackHost(const std::string& host);

// What kind of URL a field accepts.
enum class UrlRule {
  kFetch,  // manifests and keyrings: https, or http only to a loopback host
  kApt,    // apt repositories: https, http or file:/// (apt verifies what it downloads against the key)
};
// "" when `s` is acceptable under `rule`, else the reason.
std::string CheckUrl(std::string_view s, UrlRule rule);

// "" when `path` is absolute, normalised (no "//", "." or ".." components, no trailing '/'), at most 255
// bytes, made of [A-Za-z0-9._+~/-] and directly inside one of `dirs` (each ends with '/'); else the reason.
std::string CheckConfinedPath(std::string_view path, const std::vector<std::string>& dirs);

// "" when `path` is relative and stays below the directory it is read from: normalised (no "//", "." or ".."
// components, no trailing '/'), at most 255 bytes, made of [A-Za-z0-9._+~/-]; else the reason.
std::string CheckRelativePath(std::string_view path);

// The most of a token an error message quotes.
inline constexpr size_t kMaxQuotedBytes = 40;
// A value, key or name read from a file, for an error message: in double quotes, its first kMaxQuotedBytes
// bytes at most (never half a UTF-8 character; `...` after the closing quote when cut) and TerminalSafe. An
// error shows which token is wrong, never more of the file than that: `"abc"`, `"a\ex"`, `"0123...9"...`.
std::string QuoteToken(std::string_view token);

}  // namespace gp
