// util/json_scan.h against nlohmann::json::parse, the parser it must agree with: every case below is checked
// both ways (the scanner accepts exactly what nlohmann accepts, within the nesting limit), with a table of
// corners, every string of one and two bytes, every escape, UTF-8 lead and second bytes, and the decoded text
// of every accepted string.
#include "util/json_scan.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/json_locator.h"

namespace {

using gp::JsonScanner;
using V = JsonScanner::Verdict;
using nlohmann::json;

constexpr int kDepth = 32;

// nlohmann's answer, with the nesting limit the snapshot reader applies before it (JsonTooDeepAt).
bool NlohmannAccepts(const std::string& text) {
  if (gp::JsonTooDeepAt(text, kDepth)) return false;
  // nlohmann's own parser with its SAX acceptor: the same lexer and grammar as json::parse, without building
  // the tree or throwing (half of these texts are refused, and an exception costs more than the parse).
  return json::accept(text);
}

// "ok", "invalid" or "unsure", checked against nlohmann where the scanner is sure.
std::string Verdict(const std::string& text) {
  const V v = gp::ValidateJson(text, kDepth);
  if (v == V::kUnsure) return "unsure";
  const bool ours = v == V::kOk;
  if (ours != NlohmannAccepts(text))
    return ours ? "accepted what nlohmann refuses" : "refused what nlohmann accepts";
  return ours ? "ok" : "invalid";
}

// The decoded text of the string `literal` (a JSON string with its quotes) by the scanner.
std::string Decoded(const std::string& literal) {
  JsonScanner s(literal, kDepth);
  std::string_view raw;
  bool escaped = false;
  REQUIRE(s.String(raw, escaped));
  std::string out;
  JsonScanner::Unescape(raw, out);
  return out;
}

std::string Str(std::initializer_list<int> bytes) {
  std::string s = "\"";
  for (int b : bytes) s += static_cast<char>(b);
  return s + "\"";
}

}  // namespace

TEST_CASE("json scanner: the corners of RFC 8259 as nlohmann reads them", "[util][json_scan]") {
  struct Case {
    std::string text;
    const char* expect;
  };
  const std::vector<Case> cases = {
      // structure and whitespace
      {"{}", "ok"},
      {"[]", "ok"},
      {" \t\r\n{ \"a\" : [ 1 , {} , [] ] } \n", "ok"},
      {"{\"\":0}", "ok"},
      {"", "invalid"},
      {" ", "invalid"},
      {"{", "invalid"},
      {"}", "invalid"},
      {"[1,]", "invalid"},
      {"[,1]", "invalid"},
      {"{,}", "invalid"},
      {"{\"a\":1,}", "invalid"},
      {"{\"a\"}", "invalid"},
      {"{\"a\":}", "invalid"},
      {"{1:2}", "invalid"},
      {"{\"a\" 1}", "invalid"},
      {"[1 2]", "invalid"},
      {"{\"a\":1 \"b\":2}", "invalid"},
      {"[}", "invalid"},
      {"{]", "invalid"},
      {"[[]", "invalid"},
      {"{} {}", "invalid"},
      {"[] x", "invalid"},
      {"1 2", "invalid"},
      {"\f{}", "invalid"},
      {"{}\v", "invalid"},
      {std::string("{}\0", 3), "unsure"},
      {std::string("{} \0x", 5), "unsure"},
      {std::string("[\0]", 3), "invalid"},
      {"/*c*/{}", "invalid"},
      {"{}//", "invalid"},
      // byte-order mark: once, whole, first
      {"\xEF\xBB\xBF{}", "ok"},
      {"\xEF\xBB\xBF\xEF\xBB\xBF{}", "invalid"},
      {"\xEF\xBB{}", "invalid"},
      {" \xEF\xBB\xBF{}", "invalid"},
      {"\xEF\xBB\xBF", "invalid"},
      // literals
      {"true", "ok"},
      {"false", "ok"},
      {"null", "ok"},
      {"[true,false,null]", "ok"},
      {"tru", "invalid"},
      {"True", "invalid"},
      {"nul", "invalid"},
      {"nulll", "invalid"},
      {"truefalse", "invalid"},
      // numbers
      {"0", "ok"},
      {"-0", "ok"},
      {"-0.0e+0", "ok"},
      {"1E5", "ok"},
      {"1e-5", "ok"},
      {"12.50", "ok"},
      {"18446744073709551616", "ok"},
      {"-9223372036854775809", "ok"},
      {"1e307", "ok"},
      {"9.9e306", "ok"},
      {"1e-999999", "ok"},
      {"0." + std::string(400, '0') + "1", "ok"},
      {std::string(300, '9'), "ok"},
      {"1e00000000000000000000000000000300", "ok"},
      {"01", "invalid"},
      {"-", "invalid"},
      {"-a", "invalid"},
      {"1.", "invalid"},
      {".5", "invalid"},
      {"+1", "invalid"},
      {"1e", "invalid"},
      {"1e+", "invalid"},
      {"0x1", "invalid"},
      {"1.5.3", "invalid"},
      {"--1", "invalid"},
      {"1e5e5", "invalid"},
      {"Infinity", "invalid"},
      {"NaN", "invalid"},
      {"-01", "invalid"},
      {"[1.]", "invalid"},
      // numbers no double may hold: nlohmann's strtod decides, the scanner does not guess
      {"1e308", "unsure"},
      {"1.7e308", "unsure"},
      {"1e309", "unsure"},
      {"-1e999", "unsure"},
      {std::string(400, '9'), "unsure"},
      {"0.1e310", "unsure"},
      {"[1e99999999999999999999]", "unsure"},
      // strings
      {"\"\"", "ok"},
      {"\"abc\"", "ok"},
      {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "ok"},
      {"\"\\u0000\"", "ok"},
      {"\"\\u00e9\\u00E9\"", "ok"},
      {"\"\\ud83d\\ude00\"", "ok"},
      {"\"\\uDBFF\\uDFFF\"", "ok"},
      {"\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \x7F\"", "ok"},
      {"\"abc", "invalid"},
      {"\"\\\"", "invalid"},
      {"\"\\q\"", "invalid"},
      {"\"\\U0041\"", "invalid"},
      {"\"\\u12\"", "invalid"},
      {"\"\\u12G4\"", "invalid"},
      {"\"\\ud800\"", "invalid"},
      {"\"\\udc00\"", "invalid"},
      {"\"\\ud800\\u0041\"", "invalid"},
      {"\"\\ud800x\"", "invalid"},
      {"\"\\ud800\\ud800\"", "invalid"},
      {"\"\\ude00\\ud83d\"", "invalid"},
      {"\"\\ud800\\\"", "invalid"},
      {"\"a\tb\"", "invalid"},
      {"\"a\nb\"", "invalid"},
      {std::string("\"a\0b\"", 5), "invalid"},
      {"\"\x1F\"", "invalid"},
      {"\"\xC0\x80\"", "invalid"},
      {"\"\xC1\xBF\"", "invalid"},
      {"\"\xE0\x80\x80\"", "invalid"},
      {"\"\xE0\x9F\xBF\"", "invalid"},
      {"\"\xED\xA0\x80\"", "invalid"},
      {"\"\xF0\x8F\xBF\xBF\"", "invalid"},
      {"\"\xF4\x90\x80\x80\"", "invalid"},
      {"\"\xF5\x80\x80\x80\"", "invalid"},
      {"\"\x80\"", "invalid"},
      {"\"\xC3\"", "invalid"},
      {"\"\xE2\x82\"", "invalid"},
      {"\"\xF0\x9F\x98\"", "invalid"},
      {"\"\xFF\"", "invalid"},
      {"'a'", "invalid"},
      {"{'a':1}", "invalid"},
      {"{\"a\xFF\":1}", "invalid"},
      {"{\"\\ud800\":1}", "invalid"},
      // long strings: the word-at-a-time search and its tail
      {"\"" + std::string(1000, 'x') + "\"", "ok"},
      {"\"" + std::string(1001, 'x') + "\\n\xC3\xA9\"", "ok"},
      {"\"" + std::string(17, 'x') + "\x01\"", "invalid"},
      {"\"" + std::string(23, 'x'), "invalid"},
      // nesting: 32 levels is the limit
      {std::string(32, '[') + std::string(32, ']'), "ok"},
      {std::string(33, '[') + std::string(33, ']'), "invalid"},
      {"{\"a\":" + std::string(31, '[') + std::string(31, ']') + "}", "ok"},
      {"{\"a\":" + std::string(32, '[') + std::string(32, ']') + "}", "invalid"},
  };
  for (const auto& c : cases) {
    INFO(json(c.text).dump(-1, ' ', false, json::error_handler_t::replace));
    CHECK(Verdict(c.text) == c.expect);
  }
}

TEST_CASE("json scanner: every one- and two-byte string, every escape, UTF-8 leads", "[util][json_scan]") {
  int disagree = 0;
  auto check = [&disagree](const std::string& text) {
    const std::string v = Verdict(text);
    // "unsure" only for a NUL byte after the value, where nlohmann stops reading.
    if (v != "ok" && v != "invalid" && !(v == "unsure" && text.find('\0') != std::string::npos)) {
      ++disagree;
      UNSCOPED_INFO(json(text).dump(-1, ' ', false, json::error_handler_t::replace) << ": " << v);
    }
  };
  for (int a = 0; a < 256; ++a) {
    check(Str({a}));
    check(Str({'\\', a}));
    for (int b = 0; b < 256; ++b) check(Str({a, b}));
  }
  // Three- and four-byte leads with every second byte, then a low, a high and a bad continuation.
  for (int lead = 0xE0; lead < 0x100; ++lead)
    for (int b = 0; b < 256; ++b)
      for (int c : {0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF}) {
        check(Str({lead, b, c}));
        check(Str({lead, b, c, 0x80}));
        check(Str({lead, b, 0x80, c}));
      }
  // \u escapes around the surrogates, alone and in pairs.
  const char* units[] = {"0000", "0041", "007F", "0080", "07FF", "0800", "D7FF", "D800", "DBFF",
                         "DC00", "DFFF", "E000", "FFFF", "d83d", "de00", "00g0", "12"};
  for (const char* u : units) {
    check("\"\\u" + std::string(u) + "\"");
    for (const char* v : units) check("\"\\u" + std::string(u) + "\\u" + v + "\"");
    check("\"\\u" + std::string(u) + "\\n\"");
    check("\"\\u" + std::string(u) + "x\"");
  }
  CHECK(disagree == 0);
}

TEST_CASE("json scanner: strings decode as nlohmann decodes them", "[util][json_scan]") {
  const std::vector<std::string> literals = {
      "\"\"",
      "\"plain\"",
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
      "\"\\u0000x\"",
      "\"\\u0041\\u00e9\\u20AC\"",
      "\"\\ud83d\\ude00 and \\uDBFF\\uDFFF\"",
      "\"caf\xC3\xA9 \\u00e9\"",
      "\"a\\\\u0041\"",
      "\"\\u07FF\\u0800\"",
      "\"\\uFFFF\\uE000\\uD7FF\"",
      "\"" + std::string(100, 'x') + "\\t" + std::string(100, 'y') + "\""};
  for (const auto& l : literals) {
    INFO(l);
    REQUIRE(Verdict(l) == "ok");
    CHECK(Decoded(l) == json::parse(l).get<std::string>());
  }
}

TEST_CASE("json scanner: pulling members and elements", "[util][json_scan]") {
  JsonScanner s(" { \"a\" : [1, \"x\", null, {\"k\\u0073\": true}], \"b\": null, \"c\": \"v\" } ", kDepth);
  REQUIRE(s.EnterObject());
  std::string_view key;
  REQUIRE(s.NextKey(key));
  CHECK(key == "a");
  CHECK(s.Peek() == JsonScanner::Type::kArray);
  CHECK_FALSE(s.EnterObject());  // not an object: nothing consumed, no error
  CHECK(s.ok());
  REQUIRE(s.EnterArray());
  REQUIRE(s.NextItem());
  CHECK(s.Peek() == JsonScanner::Type::kNumber);
  std::string_view raw;
  bool escaped = true;
  CHECK_FALSE(s.String(raw, escaped));
  REQUIRE(s.Skip());
  REQUIRE(s.NextItem());
  REQUIRE(s.String(raw, escaped));
  CHECK(raw == "x");
  CHECK_FALSE(escaped);
  REQUIRE(s.NextItem());
  CHECK(s.Null());
  REQUIRE(s.NextItem());
  REQUIRE(s.EnterObject());
  REQUIRE(s.NextKey(key));
  CHECK(key == "ks");  // decoded
  CHECK(s.Peek() == JsonScanner::Type::kBool);
  REQUIRE(s.Skip());
  CHECK_FALSE(s.NextKey(key));
  CHECK_FALSE(s.NextItem());
  REQUIRE(s.NextKey(key));
  CHECK(key == "b");
  CHECK(s.Null());
  REQUIRE(s.NextKey(key));
  CHECK(key == "c");
  CHECK(s.Skip());
  CHECK_FALSE(s.NextKey(key));
  CHECK(s.ok());
  CHECK(s.Finish());

  JsonScanner bad("{\"a\": [1,]}", kDepth);
  REQUIRE(bad.EnterObject());
  REQUIRE(bad.NextKey(key));
  CHECK_FALSE(bad.Skip());
  CHECK(bad.verdict() == V::kInvalid);
  CHECK_FALSE(bad.NextKey(key));  // errors are sticky
  CHECK_FALSE(bad.Finish());

  JsonScanner big("[1e400, 2]", kDepth);
  CHECK_FALSE(big.Skip());
  CHECK(big.verdict() == V::kUnsure);
}
