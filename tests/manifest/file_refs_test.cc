// Files a document names (`extends:`, `workload.task`) stay in the directory of the file that names them or
// under /etc/gpuprep/, after every symbolic link and ".." is followed (through the Fs, so a --root tree
// resolves the same way); a file that is not a gpuprep document is refused at its position without its
// text, and a quoted token is cut at 40 bytes and escaped.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "layers/task.h"
#include "manifest/helpers.h"
#include "manifest/loader.h"
#include "sys/fs.h"
#include "util/strings.h"

using gp::test::ErrorOf;
namespace m = gp::manifest;

namespace {

// Made-up bytes in the shape of an OpenSSH private key (one YAML plain scalar when read as YAML).
const std::string kFakeKeyLine = "QyNTUxOQAAACBGQUtFLUtFWS1GT1ItVEVTVFMtT05MWS0wMDAwMDAwMDAwAAAAmFBSSVZB";
const std::string kFakeKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
    kFakeKeyLine +
    "\n"
    "VEUtS0VZLU1BVEVSSUFMLU5FVkVSLUlOLUFOLUVSUk9SLU1FU1NBR0UAAAALc3NoLWVk\n"
    "-----END OPENSSH PRIVATE KEY-----\n";

bool QuotesKey(const std::string& error) {
  return error.find("PRIVATE KEY") != std::string::npos || error.find(kFakeKeyLine) != std::string::npos ||
         error.find("b3BlbnNz") != std::string::npos;
}

std::string ChildOf(const std::string& extends) {
  return "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + extends + "\nmetadata: {name: c}\n";
}

const std::string kSiteBase =
    "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\n"
    "metadata: {name: base}\n";

// A tree read as --root reads one: /keys/id_ed25519 outside the stack's directory /site/.
struct KeyTree {
  gp::test::TempRoot root;
  gp::sys::DiskFs fs{root.path()};
  KeyTree() { root.Write("/keys/id_ed25519", kFakeKey); }
  std::string Load(const std::string& path, const std::string& text) {
    root.Write(path, text);
    return ErrorOf([&] { m::LoadStack(path, m::LoadContext{&fs, nullptr}); });
  }
};

const std::string kOutsideRoots =
    ", outside /site/ (the directory of the file that names it) and /etc/gpuprep/";

}  // namespace

TEST_CASE("extends: a file outside the stack's directory and /etc/gpuprep/ is refused unread",
          "[manifest][file_refs]") {
  KeyTree t;
  // An absolute path, a ".." path, a linked file and a linked directory: each one line, no key text.
  std::string e = t.Load("/site/abs.yaml", ChildOf("/keys/id_ed25519"));
  CHECK(e ==
        "2 /site/abs.yaml:3:10: extends \"/keys/id_ed25519\": leads to /keys/id_ed25519" + kOutsideRoots);
  CHECK_FALSE(QuotesKey(e));
  e = t.Load("/site/up.yaml", ChildOf("../keys/id_ed25519"));
  CHECK(e ==
        "2 /site/up.yaml:3:10: extends \"../keys/id_ed25519\": leads to /keys/id_ed25519" + kOutsideRoots);
  CHECK_FALSE(QuotesKey(e));
  t.root.Symlink("/keys/id_ed25519", "/site/key.yaml");
  e = t.Load("/site/link.yaml", ChildOf("key.yaml"));
  CHECK(e ==
        "2 /site/link.yaml:3:10: extends \"key.yaml\": leads through a symbolic link to /keys/id_ed25519" +
            kOutsideRoots);
  CHECK_FALSE(QuotesKey(e));
  t.root.Symlink("../keys", "/site/linked");
  e = t.Load("/site/dir.yaml", ChildOf("linked/id_ed25519"));
  CHECK(e ==
        "2 /site/dir.yaml:3:10: extends \"linked/id_ed25519\": leads through a symbolic link to "
        "/keys/id_ed25519" +
            kOutsideRoots);
  // ".." after a linked directory is taken from where the link leads, as the kernel takes it.
  t.root.Write("/keys/sub/x", "");
  t.root.Symlink("/keys/sub", "/site/deep");
  e = t.Load("/site/dotdot.yaml", ChildOf("deep/../id_ed25519"));
  CHECK(e ==
        "2 /site/dotdot.yaml:3:10: extends \"deep/../id_ed25519\": leads through a symbolic link to "
        "/keys/id_ed25519" +
            kOutsideRoots);
  // /etc/gpuprep/ is no way out either.
  e = t.Load("/site/etc.yaml", ChildOf("/etc/gpuprep/../../keys/id_ed25519"));
  CHECK(e ==
        "2 /site/etc.yaml:3:10: extends \"/etc/gpuprep/../../keys/id_ed25519\": leads to /keys/id_ed25519" +
            kOutsideRoots);
  // A parent file is held to its own directory.
  t.root.Write("/site/team/base.yaml", ChildOf("../../keys/id_ed25519"));
  e = t.Load("/site/chain.yaml", ChildOf("team/base.yaml"));
  CHECK(e ==
        "2 /site/team/base.yaml:3:10: extends \"../../keys/id_ed25519\": leads to /keys/id_ed25519, "
        "outside /site/team/ (the directory of the file that names it) and /etc/gpuprep/");
}

TEST_CASE("extends: files below the stack's directory and under /etc/gpuprep/ load",
          "[manifest][file_refs]") {
  KeyTree t;
  m::LoadContext ctx{&t.fs, nullptr};
  t.root.Write("/site/base.yaml", kSiteBase);
  t.root.Write("/site/sub/x", "");
  t.root.Symlink("base.yaml", "/site/alias.yaml");         // a link that stays in the directory
  t.root.Write("/etc/gpuprep/team/base.yaml", kSiteBase);  // the site directory
  t.root.Write("/etc/gpuprep/site.yaml", ChildOf("team/base.yaml"));
  for (const char* target :
       {"base.yaml", "sub/../base.yaml", "alias.yaml", "/site/base.yaml", "/etc/gpuprep/team/base.yaml"}) {
    t.root.Write("/site/ok.yaml", ChildOf(target));
    CAPTURE(target);
    CHECK(m::LoadStack("/site/ok.yaml", ctx).name == "c");
  }
  CHECK(m::LoadStack("/etc/gpuprep/site.yaml", ctx).extends_chain ==
        std::vector<std::string>{"ubuntu22.04-r535-cuda12.2", "team/base.yaml"});
}

TEST_CASE("workload.task: a symbolic link leaving the stack's directory is refused",
          "[manifest][file_refs]") {
  KeyTree t;
  const std::string stack = std::string(gp::test::kMinimalStack) + "workload:\n  task: t.yaml\n";
  t.root.Symlink("/keys/id_ed25519", "/site/t.yaml");
  std::string e = t.Load("/site/stack.yaml", stack);
  CHECK(e ==
        "2 /site/stack.yaml:16:9: workload.task \"t.yaml\": leads through a symbolic link to "
        "/keys/id_ed25519" +
            kOutsideRoots);
  CHECK_FALSE(QuotesKey(e));
  t.root.Symlink("/keys", "/site/tasks");
  e = t.Load("/site/stack.yaml",
             std::string(gp::test::kMinimalStack) + "workload:\n  task: tasks/id_ed25519\n");
  CHECK(e ==
        "2 /site/stack.yaml:16:9: workload.task \"tasks/id_ed25519\": leads through a symbolic link to "
        "/keys/id_ed25519" +
            kOutsideRoots);
  // A link that stays beside the stack is followed.
  t.root.Write("/site/real.yaml",
               "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\nmodel: llama-3-8b\n");
  t.root.Symlink("real.yaml", "/site/beside.yaml");
  CHECK(t.Load("/site/stack.yaml",
               std::string(gp::test::kMinimalStack) + "workload:\n  task: beside.yaml\n") == "no error");
}

TEST_CASE("a file that is not a gpuprep document: its position and what was expected, none of its text",
          "[manifest][file_refs]") {
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  std::string e = ErrorOf([&] { m::ValidateDocument(kFakeKey, "id_ed25519", ctx); });
  CHECK(e == "2 id_ed25519:1:1: expected a gpuprep document (a map with apiVersion and kind), got a string");
  CHECK_FALSE(QuotesKey(e));
  // A task file given to size (or named by a stack) is read the same way.
  gp::size::Task task;
  e = ErrorOf([&] { gp::layers::ApplyTaskDocument(task, kFakeKey, "t.yaml"); });
  CHECK(e == "2 t.yaml:1:1: expected a gpuprep document (a map with apiVersion and kind), got a string");
}

TEST_CASE("a quoted token is cut at 40 bytes and escaped", "[manifest][file_refs]") {
  gp::sys::DiskFs fs("/");
  m::LoadContext ctx{&fs, nullptr};
  const std::string long_value(200, 'A');
  CHECK(ErrorOf([&] {
          m::ParseStack(gp::test::Edit("apiVersion: gpuprep/v1", "apiVersion: " + long_value), "s.yaml", ctx);
        }) == "2 s.yaml:1:13: apiVersion must be \"gpuprep/v1\", got \"" + std::string(40, 'A') + "\"...");
  const std::string long_key(100, 'k');
  const std::string e = ErrorOf(
      [&] { m::ParseStack(std::string(gp::test::kMinimalStack) + long_key + ": 1\n", "s.yaml", ctx); });
  CHECK(gp::StartsWith(e, "2 s.yaml:15:1: unknown key \"" + std::string(40, 'k') + "\"... ("));
  // A multi-byte character is not split: 39 ASCII bytes, then a 2-byte character that would end at 41.
  const std::string utf8 = std::string(39, 'v') + "\xc3\xa9" + "tail";
  CHECK(ErrorOf([&] {
          m::ParseStack(gp::test::Edit("version: 535.129.03", "version: " + utf8), "s.yaml", ctx);
        }) == "2 s.yaml:9:12: \"" + std::string(39, 'v') + "\"... is not a version");
  // yaml-cpp's own word for the offending character is quoted and escaped: no raw escape reaches a terminal.
  CHECK(ErrorOf([&] { m::ParseStack("apiVersion: \"\\\x1b[2J\"\n", "s.yaml", ctx); }) ==
        "2 s.yaml:1:16: YAML syntax error: unknown escape character: \"\\e\"");
}
