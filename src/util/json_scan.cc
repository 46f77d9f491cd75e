#include "util/json_scan.h"

#include <algorithm>
#include <cstring>

namespace gp {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A string's byte that ends a plain run: the closing quote, a backslash, a control character or a non-ASCII
// byte (checked as UTF-8).
bool IsSpecial(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == '"' || u == '\\' || u < 0x20 || u >= 0x80;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__))
constexpr bool kWordScan = true;
#else
constexpr bool kWordScan = false;
#endif

// The scanner's innermost steps, inlined where they are used (a call costs as much as the step).
#if defined(__GNUC__) || defined(__clang__)
#define GP_JSON_INLINE inline __attribute__((always_inline))
#else
#define GP_JSON_INLINE inline
#endif

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of every byte of `w` that IsSpecial, eight at a time: per byte b, b - 0x20 has its high bit
// set when b < 0x20, (b ^ '"') - 1 when b is '"', (b ^ '\\') - 1 when b is '\\', and b itself when b >= 0x80
// (the other terms are set for no other b below 0x80). A subtraction borrows from the byte above only where
// the byte below matched, so a byte can be marked falsely only above a true one: the lowest marked byte is
// always the first special one.
GP_JSON_INLINE uint64_t SpecialBytes(uint64_t w) {
  const uint64_t quote = w ^ (kOnes * '"');
  const uint64_t backslash = w ^ (kOnes * '\\');
  return ((w - kOnes * 0x20) | (quote - kOnes) | (backslash - kOnes) | w) & kHighBits;
}

// The first IsSpecial byte in [p, end), or end.
GP_JSON_INLINE const char* FindSpecial(const char* p, const char* end) {
  if (kWordScan) {
    while (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, sizeof w);
      if (const uint64_t s = SpecialBytes(w)) return p + (__builtin_ctzll(s) >> 3);
      p += 8;
    }
  }
  while (p < end && !IsSpecial(*p)) ++p;
  return p;
}

// Four hex digits at p (the caller made sure they are there): their value, or -1.
int Hex4(const char* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v * 16 + d;
  }
  return v;
}

void AppendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decimal digits a double holds before it overflows: a number below 10^308 is finite.
constexpr int64_t kMaxMagnitude = 308;

}  // namespace

JsonScanner::JsonScanner(std::string_view text, int max_depth)
    : begin_(text.data()),
      p_(text.data()),
      end_(text.data() + text.size()),
      max_depth_(std::clamp(max_depth, 0, 63)) {
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) p_ += 3;  // nlohmann skips a leading BOM
}

bool JsonScanner::Fail(Verdict v) {
  if (verdict_ == Verdict::kOk) verdict_ = v;
  return false;
}

GP_JSON_INLINE void JsonScanner::Blank() {
  while (p_ < end_) {
    if (kWordScan && *p_ == ' ' && end_ - p_ >= 8) {  // indentation: up to eight spaces at a time
      uint64_t w;
      std::memcpy(&w, p_, sizeof w);
      const uint64_t other = w ^ (kOnes * ' ');
      p_ += other ? __builtin_ctzll(other) >> 3 : 8;  // at least one: *p_ is a space
      continue;
    }
    if (!IsBlank(*p_)) return;
    ++p_;
  }
}

JsonScanner::Type JsonScanner::Peek() {
  if (!ok()) return Type::kBad;
  Blank();
  if (p_ < end_) {
    switch (*p_) {
      case '{':
        return Type::kObject;
      case '[':
        return Type::kArray;
      case '"':
        return Type::kString;
      case 't':
      case 'f':
        return Type::kBool;
      case 'n':
        return Type::kNull;
      default:
        if (*p_ == '-' || IsDigit(*p_)) return Type::kNumber;
    }
  }
  Fail();
  return Type::kBad;
}

bool JsonScanner::Open(bool object) {
  if (depth_ >= max_depth_) return Fail();
  const uint64_t bit = uint64_t{1} << depth_;
  objects_ = object ? objects_ | bit : objects_ & ~bit;
  first_ |= bit;
  ++depth_;
  ++p_;
  return true;
}

bool JsonScanner::EnterObject() { return Peek() == Type::kObject && Open(true); }
bool JsonScanner::EnterArray() { return Peek() == Type::kArray && Open(false); }

bool JsonScanner::MemberKey(std::string_view* key) {
  if (p_ == end_ || *p_ != '"') return Fail();
  ++p_;
  std::string_view raw;
  bool escaped = false;
  if (!ScanString(raw, escaped)) return false;
  if (key && escaped) {
    key_buffer_.clear();
    Unescape(raw, key_buffer_);
    *key = key_buffer_;
  } else if (key) {
    *key = raw;
  }
  if (p_ < end_ && *p_ == ':') {  // as doctor writes it, with no blank before the colon
    ++p_;
    return true;
  }
  Blank();
  if (p_ == end_ || *p_ != ':') return Fail();
  ++p_;
  return true;
}

int JsonScanner::Step(char close) {
  if (!ok()) return -1;
  if (depth_ == 0) {  // no container open: a caller's mistake, refused rather than guessed at
    Fail();
    return -1;
  }
  Blank();
  const uint64_t bit = uint64_t{1} << (depth_ - 1);
  if (p_ < end_ && *p_ == close) {
    ++p_;
    --depth_;
    return 0;
  }
  if (p_ < end_ && (first_ & bit)) {  // the first member or element: checked by whatever reads it
    first_ &= ~bit;
    return 1;
  }
  if (p_ < end_ && *p_ == ',') {  // the next one ("[1,]" fails where the element is read)
    ++p_;
    Blank();
    return 1;
  }
  Fail();
  return -1;
}

bool JsonScanner::NextKey(std::string_view& key) { return Step('}') > 0 && MemberKey(&key); }

bool JsonScanner::NextItem() { return Step(']') > 0; }

bool JsonScanner::String(std::string_view& raw, bool& escaped) {
  if (Peek() != Type::kString) return false;
  ++p_;
  return ScanString(raw, escaped);
}

bool JsonScanner::Null() { return Peek() == Type::kNull && Literal("null"); }

GP_JSON_INLINE bool JsonScanner::ScanString(std::string_view& raw, bool& escaped) {
  const char* start = p_;
  escaped = false;
  for (;;) {
    p_ = FindSpecial(p_, end_);
    if (p_ == end_) return Fail();
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      raw = std::string_view(start, static_cast<size_t>(p_ - start));
      ++p_;
      return true;
    }
    if (c == '\\') {
      escaped = true;
      if (!Escape()) return false;
    } else if (c < 0x20 || !Utf8()) {
      return Fail();
    }
  }
}

bool JsonScanner::Escape() {
  if (end_ - p_ < 2) return Fail();
  switch (p_[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      p_ += 2;
      return true;
    case 'u':
      break;
    default:
      return Fail();
  }
  const int cp = end_ - p_ >= 6 ? Hex4(p_ + 2) : -1;
  if (cp < 0) return Fail();
  p_ += 6;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail();  // a low surrogate alone
  if (cp < 0xD800 || cp > 0xDBFF) return true;
  // A high surrogate: a low one must follow, as an escape.
  const int low = end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u' ? Hex4(p_ + 2) : -1;
  if (low < 0xDC00 || low > 0xDFFF) return Fail();
  p_ += 6;
  return true;
}

bool JsonScanner::Utf8() {
  // RFC 3629's table of well-formed sequences: the lead byte gives the length and the second byte's range.
  const auto c = static_cast<unsigned char>(*p_);
  int more = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    more = 1;
  } else if (c == 0xE0) {
    more = 2, lo = 0xA0;
  } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
    more = 2;
  } else if (c == 0xED) {
    more = 2, hi = 0x9F;  // not the surrogates U+D800..U+DFFF
  } else if (c == 0xF0) {
    more = 3, lo = 0x90;
  } else if (c >= 0xF1 && c <= 0xF3) {
    more = 3;
  } else if (c == 0xF4) {
    more = 3, hi = 0x8F;  // not past U+10FFFF
  } else {
    return false;  // 0x80..0xC1 (a continuation byte, an overlong lead) and 0xF5..0xFF
  }
  if (end_ - p_ <= more) return false;
  for (int i = 1; i <= more; ++i) {
    const auto b = static_cast<unsigned char>(p_[i]);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return false;
  }
  p_ += more + 1;
  return true;
}

bool JsonScanner::Literal(std::string_view word) {
  if (static_cast<size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
    return Fail();
  p_ += word.size();
  return true;
}

bool JsonScanner::Number() {
  const char* p = p_;
  if (*p == '-') ++p;
  const char* digits = p;
  if (p < end_ && *p == '0') {
    ++p;
  } else if (p < end_ && *p >= '1' && *p <= '9') {
    while (p < end_ && IsDigit(*p)) ++p;
  } else {
    return Fail();
  }
  int64_t magnitude = p - digits;  // the number is below 10^magnitude
  if (p < end_ && *p == '.') {
    const char* fraction = ++p;
    while (p < end_ && IsDigit(*p)) ++p;
    if (p == fraction) return Fail();
  }
  if (p < end_ && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative = p < end_ && *p == '-';
    if (p < end_ && (*p == '-' || *p == '+')) ++p;
    const char* exponent = p;
    int64_t e = 0;
    for (; p < end_ && IsDigit(*p); ++p)
      if (e < 100000) e = e * 10 + (*p - '0');  // saturates: past 10^5 the answer is the same
    if (p == exponent) return Fail();
    magnitude += negative ? -e : e;
  }
  p_ = p;
  return magnitude <= kMaxMagnitude || Fail(Verdict::kUnsure);
}

bool JsonScanner::Scalar() {
  switch (*p_) {
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default:
      return Number();  // which refuses what is not one
  }
}

bool JsonScanner::Skip() {
  if (!ok()) return false;
  const int base = depth_;
  for (;;) {
    // At a value.
    Blank();
    if (p_ == end_) return Fail();
    const char c = *p_;
    if (c == '{' || c == '[') {
      if (!Open(c == '{')) return false;
      Blank();
      if (p_ < end_ && *p_ == (c == '{' ? '}' : ']')) {
        ++p_;
        --depth_;
      } else {
        if (c == '{' && !MemberKey(nullptr)) return false;
        continue;  // to the first member's value, or the first element
      }
    } else if (c == '"') {
      ++p_;
      std::string_view raw;
      bool escaped = false;
      if (!ScanString(raw, escaped)) return false;
    } else if (!Scalar()) {
      return false;
    }
    // After a value: the containers it ends, then the next value.
    for (;;) {
      if (depth_ == base) return true;
      Blank();
      if (p_ == end_) return Fail();
      const bool object = IsObject();
      if (*p_ == (object ? '}' : ']')) {
        ++p_;
        --depth_;
        continue;
      }
      if (*p_ != ',') return Fail();
      ++p_;
      if (object) {
        Blank();
        if (!MemberKey(nullptr)) return false;
      }
      break;
    }
  }
}

bool JsonScanner::Finish() {
  if (!ok()) return false;
  Blank();
  // nlohmann's lexer takes a NUL byte for the end of its input and ignores what follows it, which the
  // reference's nesting check still reads: not guessed at.
  if (depth_ == 0 && p_ < end_ && *p_ == '\0') return Fail(Verdict::kUnsure);
  return (depth_ == 0 && p_ == end_) || Fail();
}

void JsonScanner::Unescape(std::string_view raw, std::string& out) {
  size_t i = 0;
  while (i < raw.size()) {
    const size_t slash = raw.find('\\', i);
    if (slash == std::string_view::npos) {
      out.append(raw.substr(i));
      return;
    }
    out.append(raw.substr(i, slash - i));
    const char e = raw[slash + 1];
    i = slash + 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        auto cp = static_cast<unsigned>(Hex4(raw.data() + i));
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // String() made sure the low surrogate follows
          cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<unsigned>(Hex4(raw.data() + i + 2)) - 0xDC00);
          i += 6;
        }
        AppendUtf8(out, cp);
        break;
      }
      default:  // '"', '\\', '/'
        out += e;
    }
  }
}

JsonScanner::Verdict ValidateJson(std::string_view text, int max_depth) {
  JsonScanner s(text, max_depth);
  if (s.Skip()) s.Finish();
  return s.verdict();
}

}  // namespace gp
