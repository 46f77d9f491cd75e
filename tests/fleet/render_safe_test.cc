// What a hostile snapshot can put in the fleet report's text and Markdown forms: nothing that drives a
// terminal (C0 and C1 controls, through util's TerminalSafe) and no Markdown markup (links, images, HTML,
// autolinks, cells split on '|'); fixes shown exactly as written, in code spans whose fence outgrows them.
// tests/integration/differential_markdown.sh reads the same output with GitHub's own cmark-gfm.
#include <catch2/catch.hpp>
#include <string>

#include "fleet/model.h"
#include "fleet/render.h"

namespace {

// One failing host with one finding group carrying `message` and `fix`.
gp::fleet::Report OneGroup(const std::string& label, const std::string& message, const std::string& fix) {
  gp::fleet::Host h;
  h.label = label;
  h.os = "ubuntu 22.04";
  h.layers["driver"] = "fail";
  h.worst = "fail";
  gp::fleet::Report r;
  r.hosts = {h};
  r.layers = {"driver"};
  r.failing = 1;
  gp::fleet::Group g;
  g.code = "driver.module-mismatch";
  g.layer = "driver";
  g.status = "fail";
  g.hosts = {label};
  g.messages = {message};
  g.fixes = {fix};
  r.groups = {g};
  return r;
}

// The fix cell of the findings table's only row.
std::string FixCell(const std::string& md) {
  const size_t row = md.find("| fail | ");
  REQUIRE(row != std::string::npos);
  const std::string line = md.substr(row, md.find('\n', row) - row);
  const size_t last = line.rfind(" |");
  const size_t start = line.rfind(" | ", last - 1);
  return line.substr(start + 3, last - start - 3);
}

}  // namespace

TEST_CASE("Markdown report: snapshot text is never markup", "[fleet][markdown]") {
  const auto r = OneGroup("host ![x](http://e/i.png)",
                          "[click](https://evil.example) <img src=x onerror=alert(1)> &lt;b&gt; *em* | split "
                          "https://evil.example www.evil.example admin@evil.example",
                          "true");
  const std::string md = gp::fleet::RenderMarkdown(r);
  CHECK(md.find("| host \\!\\[x\\]\\(http\\://e/i.png\\) | ubuntu 22.04 | 0 | **fail** |") !=
        std::string::npos);
  CHECK(
      md.find("| 1: host \\!\\[x\\]\\(http\\://e/i.png\\) | \\[click\\]\\(https\\://evil.example\\) "
              "\\<img src=x onerror=alert\\(1\\)\\> \\&lt;b\\&gt; \\*em\\* \\| split https\\://evil.example "
              "www\\.evil.example admin@<!-- -->evil.example |") != std::string::npos);
  CHECK(md.find("](") == std::string::npos);
  // every '<' is escaped, or starts the report's own <br> or empty comment
  for (size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1)) {
    INFO(md.substr(at, 12));
    CHECK((md[at - 1] == '\\' || md.compare(at, 4, "<br>") == 0 || md.compare(at, 8, "<!-- -->") == 0));
  }
}

TEST_CASE("Markdown report: a fix is a code span shown as written", "[fleet][markdown]") {
  struct Case {
    std::string fix, cell;
  };
  const Case cases[] = {
      {"sudo reboot", "`sudo reboot`"},
      {"apt-get update && apt-get install -y x", "`apt-get update && apt-get install -y x`"},
      {"printf 'a\\nb'", "`printf 'a\\nb'`"},      // a backslash stays one
      {"grep -E 'a|b' f", "`grep -E 'a\\|b' f`"},  // GFM would split the cell on a bare '|'
      {"echo `uname -r`",
       "`` echo `uname -r` ``"},  // the fence outgrows the run; padded, as it ends with one
      {"a``b", "```a``b```"},
      {"`x`", "`` `x` ``"},
      {" x ", "`  x  `"},  // CommonMark strips one space each side
      {" x", "` x`"},
      {"   ", "`   `"},                                       // all spaces: not stripped, not padded
      {"a\\|b", "`a\\\\|b`"},                                 // shows a\|b
      {"echo \x1b[31m\xc2\x9b", "`echo \\e[31m\\xC2\\x9B`"},  // controls as TerminalSafe writes them
  };
  for (const auto& c : cases) {
    INFO(c.fix);
    CHECK(FixCell(gp::fleet::RenderMarkdown(OneGroup("h", "m", c.fix))) == c.cell);
  }
}

TEST_CASE("text report: no C0 or C1 control reaches the terminal", "[fleet][text]") {
  // U+009B (CSI as one UTF-8 code point, C2 9B) is read by many terminals like ESC [.
  const auto r = OneGroup(
      "host\xc2\x9b"
      "2J",
      "msg \x1b[31m\xc2\x9b"
      "31m \x07 bad \xff",
      "fix \xc2\x85 x");
  const std::string text = gp::fleet::RenderText(r);
  CHECK(text.find("\xc2\x9b") == std::string::npos);
  CHECK(text.find("\xc2\x85") == std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find("\xff") == std::string::npos);
  CHECK(text.find("  msg \\e[31m\\xC2\\x9B31m \\x07 bad \\xFF\n") != std::string::npos);
  CHECK(text.find("  fix: fix \\xC2\\x85 x\n") != std::string::npos);
  CHECK(text.find("host\\xC2\\x9B2J") != std::string::npos);
  const std::string html = gp::fleet::RenderHtml(r);
  CHECK(html.find("\xc2\x9b") == std::string::npos);
  const std::string md = gp::fleet::RenderMarkdown(r);
  CHECK(md.find("\xc2\x9b") == std::string::npos);
}
