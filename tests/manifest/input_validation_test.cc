// Every manifest value that reaches a shell, an apt source line, a path or a terminal is checked where it
// is read: one line `PATH:LINE:COL: message`, exit 2. Each case here was an accepted hostile value before.
#include <catch2/catch.hpp>

#include "manifest/helpers.h"
#include "manifest/loader.h"

using gp::test::Edit;
using gp::test::ErrorOf;
using gp::test::kMinimalStack;
namespace m = gp::manifest;

namespace {
std::string Err(const std::string& text) {
  return ErrorOf([&] { m::ParseStack(text, "stack.yaml", m::LoadContext{}); });
}

// kMinimalStack plus one repository (line 15 on), with `field` set to `value` (a YAML flow scalar).
std::string WithRepo(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> f = {
      {"name", "cuda"},
      {"url", "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/"},
      {"suite", "/"},
      {"keyring_url",
       "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/3bf863cc.pub"},
      {"keyring_path", "/usr/share/keyrings/cuda-archive-keyring.gpg"},
      {"key_fingerprint", "EB693B3035CD5710E231E123A4B469963BF863CC"},
      {"list_path", "/etc/apt/sources.list.d/cuda.list"}};
  f[field] = value;
  std::string out = std::string(kMinimalStack) + "repositories:\n  - name: " + f["name"] + "\n";
  for (const auto& [k, v] : f)
    if (k != "name") out += "    " + k + ": " + v + "\n";
  return out;
}
}  // namespace

TEST_CASE("manifest: a plain repository validates", "[manifest][validation]") {
  m::Stack s = m::ParseStack(WithRepo("suite", "/"), "stack.yaml", m::LoadContext{});
  REQUIRE(s.repositories.size() == 1);
  CHECK(s.repositories[0].list_path == "/etc/apt/sources.list.d/cuda.list");
  // apt verifies repository contents against the key, so http and file:/// mirrors are allowed there.
  CHECK_NOTHROW(m::ParseStack(WithRepo("url", "http://mirror.example/cuda/"), "s.yaml", m::LoadContext{}));
  CHECK_NOTHROW(m::ParseStack(WithRepo("url", "file:///srv/mirror/cuda/"), "s.yaml", m::LoadContext{}));
}

TEST_CASE("manifest: names from a small alphabet", "[manifest][validation]") {
  CHECK(Err(Edit("  name: t\n", "  name: \"t\\necho pwned\"\n")) ==
        "2 stack.yaml:4:9: expected one line, got a value with a line break or control character");
  CHECK(Err(Edit("  name: t\n", "  name: \"t;reboot\"\n")) ==
        "2 stack.yaml:4:9: stack name \"t;reboot\" is not a valid name (letters, digits and . _ + ~ -, "
        "starting "
        "with a letter or digit, at most 128)");
  CHECK(Err(WithRepo("name", "\"cuda x\""))
            .find("2 stack.yaml:16:11: repository name \"cuda x\" is not a valid") == 0);
  CHECK(Err(WithRepo("suite", "\"jammy main\"")).find("suite \"jammy main\" is not") != std::string::npos);
  CHECK(Err(Edit("{id: ubuntu,", "{id: \"ubuntu;x\",")).find("os id \"ubuntu;x\" is not a valid name") !=
        std::string::npos);
}

TEST_CASE("manifest: URLs are parsed, not prefix-matched", "[manifest][validation]") {
  // A newline in url would add a second `deb [trusted=yes] ...` line to the list file.
  CHECK(Err(WithRepo("url", "\"https://a.example/\\ndeb [trusted=yes] http://evil.example/ ./\""))
            .find("expected one line") != std::string::npos);
  CHECK(Err(WithRepo("url", "\"https://a.example/ ./ x\"")).find("spaces, control and non-ASCII") !=
        std::string::npos);
  CHECK(Err(WithRepo("url", "https://user@a.example/")).find("user information (user@) is not allowed") !=
        std::string::npos);
  CHECK(Err(WithRepo("url", "ftp://a.example/")) ==
        "2 stack.yaml:22:10: \"ftp://a.example/\": a repository URL must be https://, http:// or file:///");
  // Keys: https, or http to a loopback host decided on the parsed host.
  CHECK(Err(WithRepo("keyring_url", "http://127.0.0.1@evil.example/k.gpg")).find("user information") !=
        std::string::npos);
  CHECK(Err(WithRepo("keyring_url", "http://127.0.0.1.evil.example/k.gpg"))
            .find("plain http is accepted only for loopback addresses") != std::string::npos);
  CHECK_NOTHROW(m::ParseStack(WithRepo("keyring_url", "http://127.0.0.1:8080/k.gpg"), "s", m::LoadContext{}));
  CHECK_NOTHROW(m::ParseStack(WithRepo("keyring_url", "http://[::1]:8080/k.gpg"), "s", m::LoadContext{}));
}

TEST_CASE("manifest: paths are absolute, normalised and confined", "[manifest][validation]") {
  CHECK(Err(WithRepo("list_path", "/etc/cron.d/x.list")) ==
        "2 stack.yaml:20:16: \"/etc/cron.d/x.list\": must be a file directly in /etc/apt/sources.list.d/");
  CHECK(
      Err(WithRepo("list_path", "/etc/apt/sources.list.d/../../cron.d/x.list")).find("must be normalised") !=
      std::string::npos);
  CHECK(Err(WithRepo("list_path", "/etc/apt/sources.list.d/x.conf")).find("must end in .list") !=
        std::string::npos);
  CHECK(Err(WithRepo("keyring_path", "keyrings/cuda.gpg")).find("must be an absolute path") !=
        std::string::npos);
  CHECK(Err(WithRepo("keyring_path", "/etc/shadow"))
            .find("must be a file directly in /usr/share/keyrings/ or "
                  "/etc/apt/keyrings/") != std::string::npos);
  CHECK_NOTHROW(m::ParseStack(WithRepo("keyring_path", "/etc/apt/keyrings/cuda.gpg"), "s", m::LoadContext{}));
}

TEST_CASE("manifest: package names and versions are Debian's", "[manifest][validation]") {
  const std::string base = Edit("  version: 535.129.03\n",
                                "  version: 535.129.03\n  packages:\n    - {name: PKG, version: VER}\n");
  const auto with = [&](const std::string& name, const std::string& ver) {
    std::string t = base;
    t.replace(t.find("PKG"), 3, name);
    t.replace(t.find("VER"), 3, ver);
    return Err(t);
  };
  CHECK(with("cuda-drivers-535", "535.129.03-1") == "no error");
  CHECK(with("\"-oDebug::pkgProblemResolver=1\"", "1").find("is not a Debian package name") !=
        std::string::npos);
  CHECK(with("cuda", "\"1 --allow-unauthenticated\"").find("is not a Debian version") != std::string::npos);
}

TEST_CASE("manifest: text is UTF-8 without control characters; sizes are limited", "[manifest][validation]") {
  CHECK(Err(Edit("  name: t\n", "  name: t\n  description: \"\\e[2J\"\n")) ==
        "2 stack.yaml:5:16: control character \\e in a value (byte 1)");
  CHECK(Err(Edit("  name: t\n", "  name: t\n  description: \"caf\xc3\"\n")).find("invalid UTF-8") !=
        std::string::npos);
  std::string deep =
      "apiVersion: gpuprep/v1\nkind: Stack\nnotes: " + std::string(100, '[') + std::string(100, ']') + "\n";
  CHECK(Err(deep) == "2 stack.yaml:3:72: nesting too deep");
  CHECK(Err(std::string(kMinimalStack) + "#" + std::string(1100 * 1024, 'x') + "\n") ==
        "2 stack.yaml:1:1: file is larger than the 1024 KiB limit for manifests");
}

TEST_CASE("manifest: docker packages are Debian package names and versions, like every other layer's",
          "[manifest][validation]") {
  // The docker section follows kMinimalStack (its first package on line 18). apt-get would read a name
  // starting with '-' as an option
  // (-oDpkg::Pre-Invoke::=... runs a shell command as root).
  const std::string base = std::string(kMinimalStack) + "docker:\n  engine: docker-ce\n  packages:\n";
  CHECK(Err(base + "    - {name: \"-oDpkg::Pre-Invoke::=touch${IFS}PWNED\"}\n") ==
        "2 stack.yaml:18:14: \"-oDpkg::Pre-Invoke::=touch${IFS}PWNED\" is not a Debian package name "
        "([a-z0-9][a-z0-9+.-]+)");
  CHECK(Err(base + "    - {name: docker-ce, upstream: \"--allow-unauthenticated\"}\n") ==
        "2 stack.yaml:18:35: \"--allow-unauthenticated\" is not a Debian version "
        "([epoch:]upstream[-revision], starting with a digit)");
  CHECK(Err(base + "    - {name: docker-ce, version: \"5:28.3.2-1\", upstream: 28.3.2}\n") ==
        "2 stack.yaml:18:48: give either version (the exact dpkg version) or upstream, not both");
  m::Stack s =
      m::ParseStack(base + "    - {name: docker-ce, upstream: 28.3.2}\n    - {name: docker-ce-cli}\n",
                    "stack.yaml", m::LoadContext{});
  REQUIRE(s.docker.packages.size() == 2);
  CHECK(s.docker.packages[0].upstream == "28.3.2");
}
