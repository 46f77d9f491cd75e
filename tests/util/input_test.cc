// util/input.h: UTF-8, control characters, terminal escaping, names, URLs and confined paths.
#include "util/input.h"

#include <catch2/catch.hpp>

using namespace gp;

TEST_CASE("UTF-8: ill-formed sequences are found and replaced", "[util][input]") {
  CHECK_FALSE(InvalidUtf8At("plain ascii, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80"));
  CHECK(InvalidUtf8At("ab\xc3") == std::optional<size_t>(2));            // truncated
  CHECK(InvalidUtf8At("\xc0\xaf") == std::optional<size_t>(0));          // overlong '/'
  CHECK(InvalidUtf8At("x\xed\xa0\x80") == std::optional<size_t>(1));     // a surrogate
  CHECK(InvalidUtf8At("\xf4\x90\x80\x80") == std::optional<size_t>(0));  // above U+10FFFF
  CHECK(InvalidUtf8At("\xff") == std::optional<size_t>(0));
  size_t n = 0;
  CHECK(ReplaceInvalidUtf8("a\xff"
                           "b\xc3",
                           &n) ==
        "a\xef\xbf\xbd"
        "b\xef\xbf\xbd");
  CHECK(n == 2);
  CHECK(ReplaceInvalidUtf8("caf\xc3\xa9") == "caf\xc3\xa9");
}

TEST_CASE("control characters: C0, DEL and C1", "[util][input]") {
  CHECK_FALSE(ControlCharAt("one line"));
  CHECK(ControlCharAt("a\nb") == std::optional<size_t>(1));
  CHECK_FALSE(ControlCharAt("a\nb\tc", /*allow_text=*/true));
  CHECK(ControlCharAt("a\rb", true) == std::optional<size_t>(1));
  CHECK(ControlCharAt("\x7f") == std::optional<size_t>(0));
  CHECK(ControlCharAt("x\xc2\x9b[2J") == std::optional<size_t>(1));  // C1 CSI
}

TEST_CASE("TerminalSafe: one line, no escape sequences, text unchanged", "[util][input]") {
  CHECK(TerminalSafe("driver 535.129.03 caf\xc3\xa9") == "driver 535.129.03 caf\xc3\xa9");
  CHECK(TerminalSafe("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(TerminalSafe("\x1b[2J\x07") == "\\e[2J\\x07");
  CHECK(TerminalSafe("\xc2\x9b"
                     "31m") == "\\xC2\\x9B31m");
  CHECK(TerminalSafe("bad \xff byte") == "bad \\xFF byte");
}

TEST_CASE("names, Debian names and versions", "[util][input]") {
  for (const char* ok :
       {"cuda", "nvidia-container-toolkit", "ubuntu22.04-r535-cuda12.2", "a", "22.04", "x_y+z~1"})
    CHECK(ValidName(ok));
  for (const char* bad : {"", "-x", ".hidden", "a b", "a/b", "a;b", "a\nb", "a$b", "\xc3\xa9"})
    CHECK_FALSE(ValidName(bad));
  CHECK_FALSE(ValidName(std::string(129, 'a')));
  CHECK(ValidDebName("libcudnn8"));
  CHECK(ValidDebName("g++"));
  CHECK_FALSE(ValidDebName("Cuda"));
  CHECK_FALSE(ValidDebName("-o"));
  CHECK(ValidDebVersion("8.9.7.29-1+cuda12.2"));
  CHECK(ValidDebVersion("1:2.0~rc1-0ubuntu1"));
  CHECK_FALSE(ValidDebVersion("1 2"));
  CHECK_FALSE(ValidDebVersion("x1"));
  for (const char* ok :
       {"5:28.3.2-1~ubuntu.22.04~jammy", "580.95.05-0ubuntu1", "1.0", "2.27.7-1+cuda13.0", "1.0-rc-1"})
    CHECK(ValidDebVersion(ok));
  for (const char* bad : {"-1", "1-", ":1", "a:1", "1:x", "1:2:3", "1.0-a:b", "1=2", "1.0-x_y", "1 --force"})
    CHECK_FALSE(ValidDebVersion(bad));
  CHECK(ValidPackageWord("libcudnn8=8.9.7.29-1+cuda12.2"));
  CHECK(ValidPackageWord("docker.io"));
  for (const char* bad : {"--allow-unauthenticated=1", "-oDpkg::Pre-Invoke::=touch${IFS}PWNED", "x=--y",
                          "a:amd64", "libfoo=", "=1.0", "libfoo=1.0=2"})
    CHECK_FALSE(ValidPackageWord(bad));
}

TEST_CASE("ParseUrl: strict RFC 3986 subset", "[util][input]") {
  auto u = ParseUrl("HTTPS://Developer.Download.NVIDIA.com:443/compute/cuda/repos/?a=b");
  REQUIRE(u);
  CHECK(u->scheme == "https");
  CHECK(u->host == "developer.download.nvidia.com");
  CHECK(u->port == "443");
  CHECK(u->path == "/compute/cuda/repos/?a=b");
  u = ParseUrl("http://[::1]:8080/k.gpg");
  REQUIRE(u);
  CHECK(u->host == "[::1]");
  CHECK(u->port == "8080");
  u = ParseUrl("file:///srv/mirror/");
  REQUIRE(u);
  CHECK(u->host.empty());
  std::string why;
  CHECK_FALSE(ParseUrl("http://127.0.0.1@evil.example/", &why));
  CHECK(why == "user information (user@) is not allowed");
  CHECK_FALSE(ParseUrl("http://a.example:0/"));
  CHECK_FALSE(ParseUrl("http://a.example:/"));
  CHECK_FALSE(ParseUrl("http://a.example:99999/"));
  CHECK_FALSE(ParseUrl("http://a b/"));
  CHECK_FALSE(ParseUrl("http://a.example/\n"));
  CHECK_FALSE(ParseUrl("http://%31%32%37.0.0.1/"));
  CHECK_FALSE(ParseUrl("http:///x"));
  CHECK_FALSE(ParseUrl("file://host/x"));
  CHECK_FALSE(ParseUrl("https://a.example/#frag"));
  CHECK_FALSE(ParseUrl("no-scheme"));
}

TEST_CASE("loopback is decided on the parsed host", "[util][input]") {
  for (const char* h : {"localhost", "127.0.0.1", "127.1.2.3", "[::1]"}) CHECK(IsLoopbackHost(h));
  for (const char* h : {"127.0.0.1.example.com", "127.evil.example", "localhost.example", "128.0.0.1",
                        "127.0.0", "127.0.0.256", "0x7f.0.0.1", "[::2]", ""})
    CHECK_FALSE(IsLoopbackHost(h));
  CHECK(CheckUrl("https://a.example/k", UrlRule::kFetch).empty());
  CHECK(CheckUrl("http://127.0.0.1:8000/k", UrlRule::kFetch).empty());
  CHECK(CheckUrl("http://127.0.0.1@a.example/k", UrlRule::kFetch) ==
        "not a usable URL: user information (user@) is not allowed");
  CHECK(CheckUrl("http://127.0.0.1.a.example/k", UrlRule::kFetch) ==
        "plain http is accepted only for loopback addresses: use https://");
  CHECK(CheckUrl("file:///k", UrlRule::kFetch) ==
        "expected an https:// URL (plain http only for loopback addresses)");
  CHECK(CheckUrl("http://mirror.example/", UrlRule::kApt).empty());
  CHECK(CheckUrl("file:///srv/m/", UrlRule::kApt).empty());
  CHECK(CheckUrl("ftp://m/", UrlRule::kApt) == "a repository URL must be https://, http:// or file:///");
}

TEST_CASE("confined paths", "[util][input]") {
  const std::vector<std::string> lists = {"/etc/apt/sources.list.d/"};
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d/cuda.list", lists).empty());
  CHECK(CheckConfinedPath("etc/apt/sources.list.d/cuda.list", lists) == "must be an absolute path");
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d/../x.list", lists) ==
        "must be normalised (no //, . or .. components)");
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d//x.list", lists) ==
        "must be normalised (no //, . or .. components)");
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d/sub/x.list", lists) ==
        "must be a file directly in /etc/apt/sources.list.d/");
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d/", lists) == "must name a file, not a directory");
  CHECK(CheckConfinedPath("/etc/apt/sources.list.d/a b.list", lists) ==
        "a path here holds letters, digits and . _ + ~ - / only");
  CHECK(CheckConfinedPath("/etc/cron.d/x", lists) == "must be a file directly in /etc/apt/sources.list.d/");
}

TEST_CASE("relative paths stay below their directory", "[util][input]") {
  CHECK(gp::CheckRelativePath("task.yaml").empty());
  CHECK(gp::CheckRelativePath("tasks/70b_lora-v2.yaml").empty());
  CHECK(gp::CheckRelativePath("") == "must not be empty");
  CHECK(gp::CheckRelativePath("/etc/task.yaml") == "must be relative to the file that names it");
  for (const char* escape : {"../task.yaml", "tasks/../../x", "./task.yaml", "tasks//x", "a/."})
    CHECK(gp::CheckRelativePath(escape) == "must be normalised (no //, . or .. components)");
  CHECK(gp::CheckRelativePath("tasks/") == "must name a file, not a directory");
  CHECK(gp::CheckRelativePath("t\nask") == "a path here holds letters, digits and . _ + ~ - / only");
  CHECK(gp::CheckRelativePath(std::string(255, 'a')).empty());
  CHECK(gp::CheckRelativePath(std::string(256, 'a')) == "longer than 255 characters");
}

TEST_CASE("IPv6 literals as inet_pton reads them, numeric IPv4 hosts in one spelling", "[util][input]") {
  for (const char* ok : {"::", "::1", "1::", "2001:db8::1", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::",
                         "::2:3:4:5:6:7:8", "::ffff:127.0.0.1", "1:2:3:4:5:6:1.2.3.4", "ABCD::ef"})
    CHECK(gp::ValidIpv6(ok));
  for (const char* bad : {"", ":", ":1", "1:", ":::", "1:::2", "1::2::3", "12345::", "1::2:3:4:5:6:7:8",
                          "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "ab.be", "::1.2.3", "::01.2.3.4",
                          "::256.1.1.1", "1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "g::", "::1%eth0"})
    CHECK_FALSE(gp::ValidIpv6(bad));
  std::string why;
  CHECK_FALSE(gp::ParseUrl("https://[ab.be]/x", &why));
  CHECK(why == "not an IPv6 address between the brackets");
  CHECK_FALSE(gp::ParseUrl("https://[:1]/x"));
  CHECK(gp::ParseUrl("http://[::1]:8080/x")->host == "[::1]");
  for (const char* numeric : {"http://127.1/", "http://0x7f.0.0.1/", "http://010.0.0.1/",
                              "http://2130706433/", "http://127.000.000.001/"}) {
    CHECK_FALSE(gp::ParseUrl(numeric, &why));
    CHECK(why == "an IPv4 address is written as four decimal numbers 0-255 without leading zeros");
  }
  CHECK(gp::ParseUrl("https://1e100.net/"));  // a name, not a number
  CHECK(gp::ParseUrl("https://1.2.3.4.5/"));  // five parts: libcurl reads a name too
  CHECK(gp::ParseUrl("http://127.0.0.1/"));
}
