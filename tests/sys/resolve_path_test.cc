// sys::ResolvePath: a path with every symbolic link and ".." followed, through the Fs (inside a --root tree).
#include <catch2/catch.hpp>
#include <filesystem>

#include "apply/harness.h"
#include "sys/fs.h"

namespace stdfs = std::filesystem;
using gp::sys::ResolvePath;

TEST_CASE("ResolvePath: links of files and directories, chains, '..' after a link, loops", "[sys]") {
  gp::test::TempRoot t;
  const gp::sys::DiskFs& fs = t.fs();
  t.Write("/srv/site/base.yaml", "x");
  t.Write("/keys/id", "k");
  t.Symlink("base.yaml", "/srv/site/alias.yaml");
  t.Symlink("/keys/id", "/srv/site/key.yaml");  // absolute: taken inside the tree
  t.Symlink("../../keys", "/srv/site/keys");
  t.Symlink("alias.yaml", "/srv/site/chain.yaml");

  auto r = ResolvePath(fs, "/srv/site/base.yaml");
  CHECK(r.path == "/srv/site/base.yaml");
  CHECK_FALSE(r.through_link);
  CHECK(ResolvePath(fs, "/srv//site/./sub/../base.yaml").path == "/srv/site/base.yaml");
  r = ResolvePath(fs, "/srv/site/chain.yaml");
  CHECK(r.path == "/srv/site/base.yaml");
  CHECK(r.through_link);
  CHECK_FALSE(r.through_dir);
  CHECK(ResolvePath(fs, "/srv/site/key.yaml").path == "/keys/id");
  r = ResolvePath(fs, "/srv/site/keys/id");
  CHECK(r.path == "/keys/id");
  CHECK(r.through_dir);
  // ".." after a linked directory climbs from where the link leads, as the kernel does.
  CHECK(ResolvePath(fs, "/srv/site/keys/../srv/site/base.yaml").path == "/srv/site/base.yaml");
  CHECK(ResolvePath(fs, "/../../keys/id").path == "/keys/id");  // never above the root
  CHECK(ResolvePath(fs, "/srv/site/missing/x.yaml").path == "/srv/site/missing/x.yaml");
  CHECK(ResolvePath(fs, "/").path == "/");

  t.Symlink("loop-b", "/srv/loop-a");
  t.Symlink("loop-a", "/srv/loop-b");
  r = ResolvePath(fs, "/srv/loop-a");
  CHECK(r.error == "/srv/loop-a: too many levels of symbolic links");
  CHECK(r.path == "/srv/loop-a");
}
