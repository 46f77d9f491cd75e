// util/input.h QuoteToken: what an error message quotes of a file, at most 40 bytes, escaped.
#include <catch2/catch.hpp>

#include "util/input.h"

using gp::QuoteToken;

TEST_CASE("QuoteToken: a short token whole, a long one cut at 40 bytes, both escaped", "[util][input]") {
  CHECK(QuoteToken("") == "\"\"");
  CHECK(QuoteToken("535.x") == "\"535.x\"");
  CHECK(QuoteToken(std::string(40, 'a')) == "\"" + std::string(40, 'a') + "\"");
  CHECK(QuoteToken(std::string(41, 'a')) == "\"" + std::string(40, 'a') + "\"...");
  CHECK(QuoteToken(std::string(100000, 'a')) == "\"" + std::string(40, 'a') + "\"...");
  // Escaped after the cut: 40 bytes of the token, however long their escaped form.
  CHECK(QuoteToken("\x1b[2J\x07") == "\"\\e[2J\\x07\"");
  CHECK(QuoteToken(std::string(45, '\n')) == "\"" + [] {
    std::string s;
    for (int i = 0; i < 40; ++i) s += "\\n";
    return s;
  }() + "\"...");
  // Never half a character: a 2-, 3- or 4-byte character across byte 40 goes whole.
  CHECK(QuoteToken(std::string(39, 'v') + "\xc3\xa9tail") == "\"" + std::string(39, 'v') + "\"...");
  CHECK(QuoteToken(std::string(38, 'v') + "\xe2\x82\xac" + "tail") == "\"" + std::string(38, 'v') + "\"...");
  CHECK(QuoteToken(std::string(37, 'v') + "\xf0\x9f\x98\x80" + "tail") ==
        "\"" + std::string(37, 'v') + "\"...");
  CHECK(QuoteToken(std::string(38, 'v') + "\xc3\xa9tail") == "\"" + std::string(38, 'v') + "\xc3\xa9\"...");
  // Ill-formed bytes at the cut: at most three are left off, the rest escaped.
  CHECK(QuoteToken(std::string(37, 'v') + std::string(8, '\x80')) == "\"" + std::string(37, 'v') + "\"...");
  CHECK(QuoteToken(std::string(36, 'v') + std::string(8, '\x80')) ==
        "\"" + std::string(36, 'v') + "\\x80\"...");
}
