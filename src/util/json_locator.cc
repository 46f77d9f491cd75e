#include "util/json_locator.h"

#include <cctype>

namespace gp {
namespace {

// A minimal scanner for valid JSON: it only needs to find where values start and what keys are called.
class Scanner {
 public:
  Scanner(const std::string& text, std::unordered_map<std::string, std::pair<int, int>>& out)
      : s_(text), out_(out) {}

  void Run() {
    Blank();
    Value("");
  }

 private:
  void Blank() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) Advance();
  }
  void Advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  std::string String() {  // at the opening quote; returns the decoded text (escapes kept simple)
    std::string out;
    Advance();
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        Advance();
        char c = s_[i_];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'u' ? '?' : c;
        if (c == 'u')
          for (int k = 0; k < 4 && i_ + 1 < s_.size(); ++k) Advance();
      } else {
        out += s_[i_];
      }
      Advance();
    }
    if (i_ < s_.size()) Advance();
    return out;
  }
  void Value(const std::string& path) {
    if (i_ >= s_.size()) return;
    out_.emplace(path, std::make_pair(line_, col_));
    char c = s_[i_];
    if (c == '{') {
      Advance();
      Blank();
      while (i_ < s_.size() && s_[i_] != '}') {
        if (s_[i_] != '"') return;  // malformed: stop
        std::string key = String();
        Blank();
        if (i_ < s_.size() && s_[i_] == ':') Advance();
        Blank();
        Value(path.empty() ? key : path + "." + key);
        Blank();
        if (i_ < s_.size() && s_[i_] == ',') Advance();
        Blank();
      }
      if (i_ < s_.size()) Advance();
    } else if (c == '[') {
      Advance();
      Blank();
      for (size_t n = 0; i_ < s_.size() && s_[i_] != ']'; ++n) {
        Value(path + "[" + std::to_string(n) + "]");
        Blank();
        if (i_ < s_.size() && s_[i_] == ',') Advance();
        Blank();
      }
      if (i_ < s_.size()) Advance();
    } else if (c == '"') {
      String();
    } else {
      while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_])) && s_[i_] != ',' &&
             s_[i_] != '}' && s_[i_] != ']')
        Advance();
    }
  }

  const std::string& s_;
  std::unordered_map<std::string, std::pair<int, int>>& out_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::pair<int, int> LineColumnAt(const std::string& text, size_t offset) {
  int line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string ParseErrorReason(const std::string& what) {
  size_t at = what.find("parse error");
  if (at == std::string::npos) return what;
  size_t colon = what.find(": ", at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

size_t OverflowNumberAt(std::string_view text, const std::string& what) {
  const size_t q = what.find('\'');
  const size_t q2 = q == std::string::npos ? q : what.find('\'', q + 1);
  if (q2 == std::string::npos || q2 == q + 1) return 0;
  const size_t at = text.find(std::string_view(what).substr(q + 1, q2 - q - 1));
  return at == std::string_view::npos ? 0 : at;
}

std::string ExceptionReason(const std::string& what) {
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

std::optional<size_t> JsonTooDeepAt(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

JsonLocator::JsonLocator(const std::string& text) { Scanner(text, positions_).Run(); }

std::pair<int, int> JsonLocator::Find(const std::string& path) const {
  std::string p = path;
  for (;;) {
    auto it = positions_.find(p);
    if (it != positions_.end()) return it->second;
    if (p.empty()) return {1, 1};
    size_t cut = p.find_last_of(".[");
    p = cut == std::string::npos ? "" : p.substr(0, cut);
  }
}

}  // namespace gp
