// The dpkg database read a piece at a time (Fs::ReadPieces): however the file is cut, a line split between
// two pieces reads as the whole line, and the stanzas equal a plain line-by-line reading of the whole file.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "probe/parsers.h"
#include "probe/state.h"
#include "support/map_fs.h"
#include "util/strings.h"

using namespace gp;

namespace {

// A MapFs that hands a file over in pieces of `size` bytes.
class PiecesFs : public test::MapFs {
 public:
  size_t size = 1;
  bool ReadPieces(const std::string& path,
                  const std::function<void(std::string_view)>& piece) const override {
    auto text = Read(path);
    if (!text) return false;
    for (size_t i = 0; i < text->size(); i += size) piece(std::string_view(*text).substr(i, size));
    return true;
  }
};

// The stanzas by the simplest reading there is: split at newlines, drop one trailing CR, a blank line ends
// a stanza, the last Package/Status/Version line of a stanza wins.
std::vector<probe::DpkgEntry> PlainReading(const std::string& text) {
  std::vector<probe::DpkgEntry> out;
  probe::DpkgEntry cur;
  std::istringstream in(text);
  auto flush = [&] {
    if (!cur.package.empty()) out.push_back(cur);
    cur = {};
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) flush();
    if (StartsWith(line, "Package:")) cur.package = std::string(Trim(line.substr(8)));
    if (StartsWith(line, "Status:")) cur.status = std::string(Trim(line.substr(7)));
    if (StartsWith(line, "Version:")) cur.version = std::string(Trim(line.substr(8)));
  }
  flush();
  return out;
}

std::string Describe(const std::vector<probe::DpkgEntry>& entries) {
  std::string s;
  for (const auto& e : entries) s += e.package + "|" + e.status + "|" + e.version + "\n";
  return s;
}

}  // namespace

TEST_CASE("dpkg: the status file read in pieces of any size reads as the whole", "[probe][dpkg]") {
  const std::string long_line(200000, 'x');
  std::string text =
      "Package: a\r\nStatus: install ok installed\r\nVersion: 1\r\n\r\n"  // CRLF, a CR-only blank line
      "Package: b\nStatus: install ok installed\nDescription: long\n " +
      long_line + "\nVersion: 2\n\n\n" +  // a long continuation line, then the version
      "Package: c\nVersion: 3\nStatus: hold ok installed\nVersion: 4\n\n" +  // the last value wins
      "Package: d\nStatus: deinstall ok config-files\nVersion: 5";           // no final newline
  // This machine's own database too, where there is one (a few thousand stanzas).
  std::ifstream host("/var/lib/dpkg/status", std::ios::binary);
  const std::string host_text((std::istreambuf_iterator<char>(host)), std::istreambuf_iterator<char>());
  for (const std::string* t : std::vector<const std::string*>{&text, &host_text}) {
    const std::string expected = Describe(PlainReading(*t));
    CHECK(Describe(probe::ParseDpkgStatus(*t)) == expected);
    for (size_t size : {1, 2, 3, 7, 8, 9, 64, 4096, 65536}) {
      if (t == &host_text && size < 7) continue;  // a million callbacks prove nothing more
      PiecesFs fs;
      fs.size = size;
      fs.files["/var/lib/dpkg/status"] = *t;
      INFO("pieces of " << size << " bytes");
      CHECK(Describe(probe::ReadDpkgDatabase(fs).entries) == expected);
    }
  }
  CHECK(Describe(probe::ParseDpkgStatus(text)) ==
        "a|install ok installed|1\nb|install ok installed|2\nc|hold ok installed|4\n"
        "d|deinstall ok config-files|5\n");
}
