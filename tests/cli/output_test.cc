// A path a user names for output (fleet-report -o, watch --prometheus): a regular file or nothing is
// replaced atomically; a FIFO, a character device or a descriptor link (/proc/self/fd/N, /dev/stdout) is
// opened and written where it is, and stays what it was; a directory, a socket or a block device is exit 2
// with one line naming the flag. tests/integration/output_nodes.sh does the same through the binary.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "apply/harness.h"
#include "support/cli.h"

using gp::test::Gpuprep;

namespace {

std::string P5Snapshot() { return std::string(GP_FIXTURES) + "/snapshots/h100x8-p5.json"; }

mode_t NodeType(const std::string& path, bool follow = true) {
  struct stat st {};
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return 0;
  return st.st_mode & S_IFMT;
}

// Everything readable from `fd` until its writers are gone (or 10 s pass).
std::string DrainFd(int fd) {
  std::string out;
  char buf[4096];
  for (int waited = 0; waited < 100;) {
    struct pollfd p {
      fd, POLLIN, 0
    };
    if (::poll(&p, 1, 100) == 0) {
      ++waited;
      continue;
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EAGAIN) {
      break;
    }
  }
  return out;
}

bool OneErrorLine(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

// The text report of the snapshot, as fleet-report prints it on stdout.
std::string ExpectedReport() { return Gpuprep({"fleet-report", P5Snapshot()}).out; }

}  // namespace

TEST_CASE("output: a regular file or nothing is replaced atomically", "[cli][output]") {
  gp::test::TempRoot dir;
  const std::string file = dir.path() + "/report.txt";
  auto r = Gpuprep({"fleet-report", "-o", file, P5Snapshot()});
  CHECK(r.code == 0);
  CHECK(NodeType(file) == S_IFREG);
  dir.Write("/report.txt", "old\n");
  REQUIRE(::chmod(file.c_str(), 0600) == 0);
  r = Gpuprep({"fleet-report", "-o", file, P5Snapshot()});
  CHECK(r.code == 0);
  CHECK(dir.Read("/report.txt") == ExpectedReport());
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(dir.fs().List("/") == std::vector<std::string>{"report.txt"});
}

TEST_CASE("output: a FIFO is written where it is and stays a FIFO", "[cli][output]") {
  gp::test::TempRoot dir;
  const std::string fifo = dir.path() + "/report.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  auto r = Gpuprep({"fleet-report", "-o", fifo, P5Snapshot()});
  CHECK(r.code == 0);
  CHECK(r.err == "");
  CHECK(DrainFd(rd) == ExpectedReport());
  ::close(rd);
  CHECK(NodeType(fifo) == S_IFIFO);
  CHECK(dir.fs().List("/") == std::vector<std::string>{"report.fifo"});
}

TEST_CASE("output: /proc/self/fd/N and a link to it write to that descriptor", "[cli][output]") {
  gp::test::TempRoot dir;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  REQUIRE(::fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
  const std::string proc = "/proc/self/fd/" + std::to_string(fds[1]);
  auto r = Gpuprep({"fleet-report", "-o", proc, P5Snapshot()});
  CHECK(r.code == 0);
  CHECK(r.err == "");
  // Like /dev/stdout: a link to the descriptor stays a link.
  const std::string link = dir.path() + "/stdout";
  REQUIRE(::symlink(proc.c_str(), link.c_str()) == 0);
  auto r2 = Gpuprep({"fleet-report", "-o", link, P5Snapshot()});
  CHECK(r2.code == 0);
  ::close(fds[1]);
  CHECK(DrainFd(fds[0]) == ExpectedReport() + ExpectedReport());
  ::close(fds[0]);
  CHECK(NodeType(link, /*follow=*/false) == S_IFLNK);
  CHECK(dir.fs().List("/") == std::vector<std::string>{"stdout"});
}

TEST_CASE("output: a character device is written where it is and stays a device", "[cli][output]") {
  if (::geteuid() != 0) {
    WARN("not root: no character device made");
    return;
  }
  gp::test::TempRoot dir;
  const std::string null = dir.path() + "/null";
  REQUIRE(::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);  // what /dev/null is
  auto r = Gpuprep({"fleet-report", "-o", null, P5Snapshot()});
  CHECK(r.code == 0);
  CHECK(r.err == "");
  CHECK(NodeType(null) == S_IFCHR);
  CHECK(dir.fs().List("/") == std::vector<std::string>{"null"});
}

TEST_CASE("output: a directory, a socket or a block device is exit 2, one line naming the flag",
          "[cli][output]") {
  gp::test::TempRoot dir;
  REQUIRE(::mkdir((dir.path() + "/d").c_str(), 0755) == 0);
  const std::string sock = dir.path() + "/s";
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(s >= 0);
  struct sockaddr_un addr {};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(s, reinterpret_cast<const struct sockaddr*>(&addr), sizeof addr) == 0);
  std::vector<std::pair<std::string, std::string>> cases = {{dir.path() + "/d", "a directory"},
                                                            {sock, "a socket"}};
  if (::geteuid() == 0) {
    REQUIRE(::mknod((dir.path() + "/b").c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0);
    cases.emplace_back(dir.path() + "/b", "a block device");
  }
  for (const auto& [path, kind] : cases) {
    INFO(path);
    auto r = Gpuprep({"fleet-report", "-o", path, P5Snapshot()});
    CHECK(r.code == 2);
    CHECK(OneErrorLine(r.err));
    CHECK(r.err.rfind("gpuprep: error: --output: ", 0) == 0);
    CHECK(r.err.find(kind) != std::string::npos);
    CHECK(r.out == "");
  }
  ::close(s);
  CHECK(NodeType(sock) == S_IFSOCK);
  CHECK(NodeType(dir.path() + "/d") == S_IFDIR);
  // watch --prometheus refuses the same before it samples anything.
  REQUIRE(::mkdir((dir.path() + "/x.prom").c_str(), 0755) == 0);
  auto w = Gpuprep({"watch", "--prometheus", dir.path() + "/x.prom"});
  CHECK(w.code == 2);
  CHECK(OneErrorLine(w.err));
  CHECK(w.err.rfind("gpuprep: error: --prometheus: ", 0) == 0);
  CHECK(w.err.find("a directory") != std::string::npos);
}
