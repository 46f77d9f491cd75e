// util/input.h and shell quoting: the checks that stand between outside values and a shell, an apt line,
// a path or a terminal. Properties, not just "no crash":
//  - ShellQuote then a POSIX shell's word splitting gives the word back (for words without NUL);
//  - TerminalSafe output is valid UTF-8 with no control characters and no bidirectional controls;
//  - ReplaceInvalidUtf8 output is valid UTF-8; a URL CheckUrl accepts has no user info or blanks;
//  - a path CheckConfinedPath accepts has no "." or ".." component, no "//" and starts with the allowed
//    directory.
//  - ShellJoin leaves no first word unquoted that a shell reads as syntax (a reserved word, an assignment);
//  - ValidIpv6 accepts exactly what the C library's inet_pton(AF_INET6) accepts;
//  - a size ParseBytes accepts is below 2^63.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sys/process.h"
#include "util/input.h"
#include "util/strings.h"

namespace {

// POSIX word splitting for the subset ShellQuote emits: unquoted words, '...' and backslash escapes.
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\'') {
      in_word = true;
      const size_t end = s.find('\'', i + 1);
      if (end == std::string::npos) std::abort();  // unterminated quote
      word += s.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '\\') {
      if (i + 1 >= s.size()) std::abort();
      in_word = true;
      word += s[++i];
    } else if (c == ' ') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else {
      // Outside quotes only characters with no meaning to the shell may appear.
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            std::string("@%+=:,./_-").find(c) != std::string::npos))
        std::abort();
      in_word = true;
      word += c;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

// What a shell reads as syntax in command position: a reserved word, or NAME= / NAME+= (an assignment).
bool Syntax(const std::string& w) {
  for (const char* r :
       {"if",   "then", "else",     "elif",   "fi",   "case",   "esac", "for", "while", "until", "do",
        "done", "in",   "function", "select", "time", "coproc", "!",    "{",   "}",     "[[",    "]]"})
    if (w == r) return true;
  size_t eq = w.find('=');
  if (eq == std::string::npos) return false;
  if (eq > 0 && w[eq - 1] == '+') --eq;
  if (eq == 0 || (w[0] >= '0' && w[0] <= '9')) return false;
  for (size_t i = 0; i < eq; ++i)
    if (!((w[i] >= 'a' && w[i] <= 'z') || (w[i] >= 'A' && w[i] <= 'Z') || (w[i] >= '0' && w[i] <= '9') ||
          w[i] == '_'))
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);

  // Shell quoting round trip: the input split at '\x01' into argv (NUL cannot be in an argument).
  if (in.find('\0') == std::string::npos) {
    std::vector<std::string> argv;
    size_t start = 0;
    for (size_t i = 0; i <= in.size(); ++i)
      if (i == in.size() || in[i] == '\x01') {
        argv.push_back(in.substr(start, i - start));
        start = i + 1;
      }
    const std::string line = gp::sys::ShellJoin(argv);
    if (Split(line) != argv) std::abort();
    const std::string first = line.substr(0, line.find(' '));
    if (first.find('\'') == std::string::npos && Syntax(first)) std::abort();
    unsigned char addr[16];
    if (gp::ValidIpv6(in) != (inet_pton(AF_INET6, in.c_str(), addr) == 1)) std::abort();
  }
  if (auto bytes = gp::ParseBytes(in); bytes && *bytes >= (1ULL << 63)) std::abort();

  const std::string safe = gp::TerminalSafe(in);
  if (gp::InvalidUtf8At(safe) || gp::ControlCharAt(safe) || gp::BidiControlAt(safe)) std::abort();
  size_t replaced = 0;
  const std::string fixed = gp::ReplaceInvalidUtf8(in, &replaced);
  if (gp::InvalidUtf8At(fixed)) std::abort();
  if ((replaced == 0) != !gp::InvalidUtf8At(in)) std::abort();

  for (auto rule : {gp::UrlRule::kFetch, gp::UrlRule::kApt}) {
    if (!gp::CheckUrl(in, rule).empty()) continue;
    auto u = gp::ParseUrl(in);
    if (!u) std::abort();
    const std::string authority = in.substr(0, in.find('/', in.find("://") + 3));
    if (authority.find('@') != std::string::npos || in.find(' ') != std::string::npos) std::abort();
    if (rule == gp::UrlRule::kFetch && u->scheme == "http" && !gp::IsLoopbackHost(u->host)) std::abort();
  }
  if (gp::CheckConfinedPath(in, {"/etc/apt/sources.list.d/"}).empty()) {
    if (in.rfind("/etc/apt/sources.list.d/", 0) != 0 || in.find("//") != std::string::npos ||
        in.find('\n') != std::string::npos)
      std::abort();
    // No "." or ".." component ("..list" is a file name like any other).
    for (size_t i = 0; i < in.size();) {
      size_t j = in.find('/', i + 1);
      if (j == std::string::npos) j = in.size();
      const std::string part = in.substr(i + 1, j - i - 1);
      if (part == "." || part == "..") std::abort();
      i = j;
    }
  }
  (void)gp::ValidName(in);
  (void)gp::ValidDebName(in);
  (void)gp::ValidDebVersion(in);
  return 0;
}
