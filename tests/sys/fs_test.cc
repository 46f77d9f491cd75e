// DiskFs against a real temporary tree: reads confined to the root, refusals, atomic writes and backups.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sys/fs.h"

namespace fs = std::filesystem;
using gp::sys::DiskFs;

namespace {

struct TempTree {
  TempTree() {
    char tmpl[] = "/tmp/gpuprep-fs-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempTree() { fs::remove_all(path); }
  void Write(const std::string& rel, const std::string& text) const {
    fs::create_directories(fs::path(path + rel).parent_path());
    std::ofstream(path + rel) << text;
  }
  std::string path;
};

}  // namespace

TEST_CASE("DiskFs under a root follows symlinks inside the tree, never out to this machine", "[sys]") {
  TempTree t;
  t.Write("/usr/local/cuda-12.2/version.json", "tree's toolkit");
  fs::create_symlink("/usr/local/cuda-12.2", t.path + "/usr/local/cuda");          // absolute, as on a host
  fs::create_symlink("../../../../../../etc/hostname", t.path + "/usr/local/up");  // climbs past the root
  fs::create_directories(t.path + "/proc");
  fs::create_symlink("/proc/meminfo", t.path + "/proc/meminfo");                   // absent in the tree
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
  TempTree t;
  REQUIRE(::mkfifo((t.path + "/fifo").c_str(), 0600) == 0);
  DiskFs root(t.path);
  CHECK_FALSE(root.Read("/fifo"));
  DiskFs live("/");
  CHECK_FALSE(live.Read("/dev/zero"));
  CHECK(live.ReadPrefix("/proc/self/status", 64).has_value());  // procfs files are regular and readable
}

TEST_CASE("DiskFs::WriteAtomic replaces the file and never overwrites an earlier backup", "[sys]") {
  TempTree t;
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

TEST_CASE("DiskFs::Remove is rm -f and Rename moves within the root", "[sys]") {
  TempTree t;
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
