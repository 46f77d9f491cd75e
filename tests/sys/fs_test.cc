// DiskFs against a real temporary tree: reads confined to the root, refusals, atomic writes and backups.
#include "sys/fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace fs = std::filesystem;
using gp::sys::DiskFs;

TEST_CASE("DiskFs under a root follows symlinks inside the tree, never out to this machine", "[sys]") {
  gp::test::TempDir t("gpuprep-fs");
  t.Write("/usr/local/cuda-12.2/version.json", "tree's toolkit");
  fs::create_symlink("/usr/local/cuda-12.2", t.path + "/usr/local/cuda");          // absolute, as on a host
  fs::create_symlink("../../../../../../etc/hostname", t.path + "/usr/local/up");  // climbs past the root
  fs::create_directories(t.path + "/proc");
  fs::create_symlink("/proc/meminfo", t.path + "/proc/meminfo");  // absent in the tree
  DiskFs root(t.path);

  CHECK(root.Read("/usr/local/cuda/version.json") == std::optional<std::string>("tree's toolkit"));
  CHECK(root.IsDir("/usr/local/cuda"));
  CHECK(root.List("/usr/local/cuda") == std::vector<std::string>{"version.json"});
  CHECK(root.ReadLink("/usr/local/cuda") == std::optional<std::string>("/usr/local/cuda-12.2"));
  CHECK(root.HostPath("/usr/local/cuda/version.json") == t.path + "/usr/local/cuda-12.2/version.json");
  // The live host's /proc/meminfo and /etc/hostname exist, but not inside this tree.
  CHECK_FALSE(root.Read("/proc/meminfo"));
  CHECK_FALSE(root.Exists("/proc/meminfo"));
  CHECK(root.HostPath("/usr/local/up") == t.path + "/etc/hostname");
  CHECK_FALSE(root.Read("/usr/local/up"));
  CHECK_FALSE(root.Read("/../../etc/hostname"));
}

TEST_CASE("DiskFs refuses FIFOs and devices instead of blocking on them", "[sys]") {
  gp::test::TempDir t("gpuprep-fs");
  REQUIRE(::mkfifo((t.path + "/fifo").c_str(), 0600) == 0);
  DiskFs root(t.path);
  CHECK_FALSE(root.Read("/fifo"));
  DiskFs live("/");
  CHECK_FALSE(live.Read("/dev/zero"));
  CHECK(live.ReadPrefix("/proc/self/status", 64).has_value());  // procfs files are regular and readable
}

TEST_CASE("DiskFs::WriteAtomic replaces the file and never overwrites an earlier backup", "[sys]") {
  gp::test::TempDir t("gpuprep-fs");
  DiskFs root(t.path);
  auto r = root.WriteAtomic("/etc/docker/daemon.json", "v1", 0644, true);
  REQUIRE(r.ok);
  CHECK(r.backup_path.empty());  // nothing was there
  r = root.WriteAtomic("/etc/docker/daemon.json", "v2", 0644, true);
  REQUIRE(r.ok);
  CHECK(r.backup_path == "/etc/docker/daemon.json.gpuprep-bak");
  r = root.WriteAtomic("/etc/docker/daemon.json", "v3", 0600, true);
  REQUIRE(r.ok);
  CHECK(r.backup_path == "/etc/docker/daemon.json.gpuprep-bak.1");
  CHECK(root.Read("/etc/docker/daemon.json") == std::optional<std::string>("v3"));
  CHECK(root.Read("/etc/docker/daemon.json.gpuprep-bak") == std::optional<std::string>("v1"));
  CHECK(root.Read("/etc/docker/daemon.json.gpuprep-bak.1") == std::optional<std::string>("v2"));
  CHECK_FALSE(root.Exists("/etc/docker/daemon.json.gpuprep-new"));
  struct stat st;
  REQUIRE(::stat((t.path + "/etc/docker/daemon.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("DiskFs::WriteAtomic never writes through a link or into a file planted at a temporary's name",
          "[sys]") {
  // `fleet-report -o report.txt` in a directory others can write: the temporary used to be
  // report.txt.gpuprep-new, opened with O_CREAT|O_TRUNC, so a symbolic link planted there overwrote its
  // target and made it 0644.
  gp::test::TempDir t("gpuprep-fs");
  t.Write("/victim", "secret");
  REQUIRE(::chmod((t.path + "/victim").c_str(), 0600) == 0);
  fs::create_directories(t.path + "/out");
  fs::create_symlink(t.path + "/victim", t.path + "/out/report.txt.gpuprep-new");
  t.Write("/out/other.txt.gpuprep-new", "planted");  // a planted regular file: neither truncated nor used
  DiskFs root(t.path);
  for (const std::string name : {"report.txt", "other.txt"}) {
    INFO(name);
    auto r = root.WriteAtomic("/out/" + name, "the report\n", 0644, false);
    INFO(r.error);
    REQUIRE(r.ok);
    CHECK(root.Read("/out/" + name) == std::optional<std::string>("the report\n"));
    struct stat st {};
    REQUIRE(::lstat((t.path + "/out/" + name).c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0777) == 0644);
  }
  CHECK(root.Read("/victim") == std::optional<std::string>("secret"));
  struct stat vst {};
  REQUIRE(::stat((t.path + "/victim").c_str(), &vst) == 0);
  CHECK((vst.st_mode & 0777) == 0600);
  CHECK(root.ReadLink("/out/report.txt.gpuprep-new") == std::optional<std::string>(t.path + "/victim"));
  CHECK(root.Read("/out/other.txt.gpuprep-new") == std::optional<std::string>("planted"));
  // Nothing else left beside them: the temporaries were renamed into place.
  CHECK(root.List("/out") == std::vector<std::string>{"other.txt", "other.txt.gpuprep-new", "report.txt",
                                                      "report.txt.gpuprep-new"});
  // A system file with its backup: the same, and the backup is the file it replaced.
  fs::create_directories(t.path + "/etc/docker");
  t.Write("/etc/docker/daemon.json", "{}\n");
  fs::create_symlink(t.path + "/victim", t.path + "/etc/docker/daemon.json.gpuprep-new");
  auto r = root.WriteAtomic("/etc/docker/daemon.json", "{\"a\": 1}\n", 0644, true);
  REQUIRE(r.ok);
  CHECK(root.Read("/etc/docker/daemon.json.gpuprep-bak") == std::optional<std::string>("{}\n"));
  CHECK(root.Read("/victim") == std::optional<std::string>("secret"));
}

TEST_CASE("DiskFs::WriteAtomic writes no backup that an earlier one already holds byte for byte", "[sys]") {
  // A redist switch rewrites its loader entry with the same text; each switch used to leave one more copy.
  gp::test::TempDir t("gpuprep-fs");
  DiskFs root(t.path);
  const std::string conf = "/etc/ld.so.conf.d/gpuprep-cudnn.conf";
  REQUIRE(root.WriteAtomic(conf, "/opt/gpuprep/cudnn/current/lib\n", 0644, true).ok);
  for (int i = 0; i < 3; ++i)
    REQUIRE(root.WriteAtomic(conf, "/opt/gpuprep/cudnn/current/lib\n", 0644, true).ok);
  CHECK(root.List("/etc/ld.so.conf.d") ==
        std::vector<std::string>{"gpuprep-cudnn.conf", "gpuprep-cudnn.conf.gpuprep-bak"});
  // Different bytes still get their own backup, after the earlier ones; then an identical one is found again.
  REQUIRE(root.WriteAtomic(conf, "other\n", 0644, true).ok);
  auto r = root.WriteAtomic(conf, "/opt/gpuprep/cudnn/current/lib\n", 0644, true);
  REQUIRE(r.ok);
  CHECK(r.backup_path == conf + ".gpuprep-bak.1");
  CHECK(root.Read(conf + ".gpuprep-bak.1") == std::optional<std::string>("other\n"));
  REQUIRE(root.WriteAtomic(conf, "other\n", 0644, true).ok);  // what it holds now is .gpuprep-bak's bytes
  CHECK(root.List("/etc/ld.so.conf.d").size() == 3);
}

TEST_CASE("DiskFs::WriteAtomic edits a linked system file through the link, inside /etc only", "[sys]") {
  // Configuration management links /etc/docker/daemon.json to the file it manages.
  gp::test::TempDir t("gpuprep-fs");
  t.Write("/etc/cm/docker/daemon.json", "{\"log-driver\": \"journald\"}\n");
  fs::create_directories(t.path + "/etc/docker");
  fs::create_symlink("../cm/docker/daemon.json", t.path + "/etc/docker/daemon.json");
  DiskFs root(t.path);
  CHECK(gp::sys::ResolveWriteTarget(root, "/etc/docker/daemon.json").path == "/etc/cm/docker/daemon.json");
  auto r = root.WriteAtomic("/etc/docker/daemon.json", "{\"runtimes\": {}}\n", 0644, true);
  REQUIRE(r.ok);
  CHECK(r.backup_path == "/etc/cm/docker/daemon.json.gpuprep-bak");
  CHECK(root.ReadLink("/etc/docker/daemon.json") == std::optional<std::string>("../cm/docker/daemon.json"));
  CHECK(root.Read("/etc/cm/docker/daemon.json") == std::optional<std::string>("{\"runtimes\": {}}\n"));
  CHECK(root.Read("/etc/cm/docker/daemon.json.gpuprep-bak") ==
        std::optional<std::string>("{\"log-driver\": \"journald\"}\n"));
  CHECK(root.List("/etc/docker") == std::vector<std::string>{"daemon.json"});

  // A chain of links, the last one absolute: followed to its end.
  fs::create_symlink("/etc/docker/daemon.json", t.path + "/etc/docker/second.json");
  CHECK(gp::sys::ResolveWriteTarget(root, "/etc/docker/second.json").path == "/etc/cm/docker/daemon.json");

  // A link that leaves /etc is refused, and nothing is written anywhere.
  t.Write("/srv/cm/daemon.json", "{}\n");
  fs::create_symlink("/srv/cm/daemon.json", t.path + "/etc/docker/out.json");
  r = root.WriteAtomic("/etc/docker/out.json", "x", 0644, true);
  CHECK_FALSE(r.ok);
  CHECK(
      r.error ==
      "/etc/docker/out.json is a symbolic link to /srv/cm/daemon.json, outside /etc: gpuprep edits a linked "
      "system file only when the link stays inside /etc (put the file itself at /etc/docker/out.json, or "
      "link it to a file under /etc)");
  CHECK(root.Read("/srv/cm/daemon.json") == std::optional<std::string>("{}\n"));
  CHECK(root.List("/srv/cm") == std::vector<std::string>{"daemon.json"});

  // A linked directory leads elsewhere as surely: inside /etc it is followed, out of /etc refused.
  fs::create_directories(t.path + "/etc/cm/modprobe");
  fs::create_symlink("cm/modprobe", t.path + "/etc/modprobe.d");
  r = root.WriteAtomic("/etc/modprobe.d/blacklist-nouveau.conf", "blacklist nouveau\n", 0644, true);
  REQUIRE(r.ok);
  CHECK(root.Read("/etc/cm/modprobe/blacklist-nouveau.conf") ==
        std::optional<std::string>("blacklist nouveau\n"));
  CHECK(gp::sys::ResolveWriteTarget(root, "/etc/modprobe.d/x.conf").path == "/etc/cm/modprobe/x.conf");
  fs::create_directories(t.path + "/srv/ld");
  fs::create_symlink("/srv/ld", t.path + "/etc/ld.so.conf.d");
  r = root.WriteAtomic("/etc/ld.so.conf.d/gpuprep-cudnn.conf", "x\n", 0644, true);
  CHECK_FALSE(r.ok);
  CHECK(r.error ==
        "/etc/ld.so.conf.d/gpuprep-cudnn.conf leads through a symbolic link to /srv/ld/gpuprep-cudnn.conf, "
        "outside /etc: gpuprep edits a linked system file only when the link stays inside /etc (put the "
        "file itself at /etc/ld.so.conf.d/gpuprep-cudnn.conf, or link it to a file under /etc)");
  CHECK(root.List("/srv/ld").empty());

  // A loop is refused too; gpuprep's own files (no backup) replace a link itself, as rename(2) does.
  fs::create_symlink("loop-b", t.path + "/etc/docker/loop-a");
  fs::create_symlink("loop-a", t.path + "/etc/docker/loop-b");
  CHECK(gp::sys::ResolveWriteTarget(root, "/etc/docker/loop-a").error ==
        "/etc/docker/loop-a: too many levels of symbolic links");
  REQUIRE(root.WriteAtomic("/etc/docker/out.json", "own", 0644, false).ok);
  CHECK_FALSE(root.ReadLink("/etc/docker/out.json"));
  CHECK(root.Read("/srv/cm/daemon.json") == std::optional<std::string>("{}\n"));
}

TEST_CASE("DiskFs::Remove is rm -f and Rename moves within the root", "[sys]") {
  gp::test::TempDir t("gpuprep-fs");
  t.Write("/etc/apt/sources.list.d/old.list", "deb x");
  DiskFs root(t.path);
  CHECK(root.Remove("/nope").ok);
  CHECK(root.Rename("/etc/apt/sources.list.d/old.list", "/etc/apt/sources.list.d/old.list.bak").ok);
  CHECK(root.Read("/etc/apt/sources.list.d/old.list.bak") == std::optional<std::string>("deb x"));
  CHECK(root.Remove("/etc/apt/sources.list.d/old.list.bak").ok);
  CHECK_FALSE(root.Exists("/etc/apt/sources.list.d/old.list.bak"));
  auto bad = root.Rename("/missing", "/x");
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("cannot move " + t.path + "/missing: No such file or directory") == 0);
}
