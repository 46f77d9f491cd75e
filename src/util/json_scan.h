// A strict one-pass JSON reader for readers that keep a few fields of a document and skip the rest at scan
// speed: no document tree, no allocation (but for a key with escapes), the text read where it lies and never
// past its end.
//
// It accepts exactly what nlohmann::json::parse accepts (RFC 8259), within a nesting limit:
//  - one value, after an optional UTF-8 byte-order mark, with only ' ', '\t', '\n' and '\r' between tokens;
//  - strings without raw control characters (below 0x20), in valid UTF-8 (RFC 3629: no overlong forms, no
//    encoded surrogates, nothing past U+10FFFF), with the escapes \" \\ \/ \b \f \n \r \t and \uXXXX, a high
//    surrogate \uD800-\uDBFF only when a low one \uDC00-\uDFFF follows it, a low one never alone;
//  - numbers by the grammar -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and true, false, null.
// A number that might not fit in a double (nlohmann refuses those) is not guessed at, nor a NUL byte after
// the root value (nlohmann's lexer ends its input there and ignores the rest): the verdict is kUnsure. Errors
// are sticky: after the first one every call answers false and verdict() says which it was.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gp {

class JsonScanner {
 public:
  enum class Verdict {
    kOk,       // no error so far
    kInvalid,  // the text is not JSON as above, or nests deeper than the limit: nlohmann refuses it too
    kUnsure,   // a number as large as a double's limit (nlohmann's strtod decides), or a NUL byte after the
               // root value (nlohmann stops reading there)
  };
  enum class Type { kObject, kArray, kString, kNumber, kBool, kNull, kBad };

  // `max_depth`: the deepest nesting allowed (the root object or array is level 1), at most 63.
  JsonScanner(std::string_view text, int max_depth);

  // The type of the next value, by its first byte (whitespace skipped); kBad when no value starts there
  // (the scanner has then failed).
  Type Peek();
  // Enters the next value, which must be an object (an array), within the nesting limit.
  bool EnterObject();
  bool EnterArray();
  // In an entered object: the next member's key, the scanner left at its value, which the caller then
  // consumes (String, Null, Skip, Enter...). False at the object's end, which is consumed, or on an error.
  // The view lies in the text, or in a buffer for a key with escapes, until the next call.
  bool NextKey(std::string_view& key);
  // In an entered array: true when an element follows (the scanner at it); false at the array's end
  // (consumed) or on an error.
  bool NextItem();
  // The next value, which must be a string, checked: its text between the quotes as written, and whether
  // it has escapes (Unescape decodes it).
  bool String(std::string_view& raw, bool& escaped);
  // The next value, which must be null.
  bool Null();
  // The next value, whatever it is, checked to its end and skipped.
  bool Skip();
  // After the root value: true when only whitespace follows it.
  bool Finish();

  // Offset in the text of the next byte the scanner reads (after Peek: the next value's first byte).
  size_t Offset() const { return static_cast<size_t>(p_ - begin_); }

  Verdict verdict() const { return verdict_; }
  bool ok() const { return verdict_ == Verdict::kOk; }

  // The text of a string String() accepted, escapes decoded (\u0000 becomes a NUL byte), appended to `out`.
  static void Unescape(std::string_view raw, std::string& out);

 private:
  bool Fail(Verdict v = Verdict::kInvalid);
  void Blank();
  bool Open(bool object);
  // In an open container, at its next token: 0 at its end `close` (consumed), 1 where a member or element
  // starts (its comma consumed when it is not the first), -1 on an error.
  int Step(char close);
  bool MemberKey(std::string_view* key);  // at a key's opening quote (after blanks): the key, then ':'
  bool ScanString(std::string_view& raw, bool& escaped);  // after the opening quote, to after the closing one
  bool Escape();                                          // at a backslash
  bool Utf8();                                            // at a byte >= 0x80
  bool Scalar();                                          // a number, true, false or null
  bool Number();
  bool Literal(std::string_view word);
  bool IsObject() const { return (objects_ >> (depth_ - 1)) & 1u; }

  const char* begin_;
  const char* p_;
  const char* end_;
  int max_depth_;
  int depth_ = 0;         // containers open
  uint64_t objects_ = 0;  // bit d-1: level d is an object (else an array)
  uint64_t first_ = 0;    // bit d-1: level d has had no member or element yet
  Verdict verdict_ = Verdict::kOk;
  std::string key_buffer_;  // a key with escapes, decoded
};

// The whole text as one JSON value within `max_depth` levels: kOk, kInvalid or kUnsure (see above).
JsonScanner::Verdict ValidateJson(std::string_view text, int max_depth);

}  // namespace gp
