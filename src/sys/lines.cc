#include "sys/lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gp::sys {

std::string ForEachLine(const std::string& path, size_t max_line,
                        const std::function<bool(std::string_view line, size_t number)>& fn) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "cannot read " + path + ": " + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "cannot read " + path + ": not a regular file";
  }
  std::string pending;  // the start of a line whose end is in a later chunk
  std::vector<char> buf(1 << 16);
  size_t number = 0;
  std::string error;
  bool go_on = true;
  while (go_on) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read " + path + ": " + std::strerror(errno);
      break;
    }
    if (n == 0) {
      if (!pending.empty()) go_on = fn(pending, ++number);
      break;
    }
    size_t start = 0;
    const size_t got = static_cast<size_t>(n);
    while (go_on && start < got) {
      const void* nl = std::memchr(buf.data() + start, '\n', got - start);
      const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - buf.data()) : got;
      if (pending.size() + (end - start) > max_line) {
        error = path + ":" + std::to_string(number + 1) + ": line longer than " + std::to_string(max_line) +
                " bytes";
        go_on = false;
        break;
      }
      if (!nl) {
        pending.append(buf.data() + start, end - start);
        break;
      }
      if (pending.empty()) {
        go_on = fn(std::string_view(buf.data() + start, end - start), ++number);
      } else {
        pending.append(buf.data() + start, end - start);
        go_on = fn(pending, ++number);
        pending.clear();
      }
      start = end + 1;
    }
  }
  ::close(fd);
  return error;
}

}  // namespace gp::sys
