// A small tar writer for tests and fuzz_redist_archive: POSIX ustar headers (pax 'x' records for a name, link
// target or size that does not fit), so a test can build any archive, hostile ones included, in memory.
// The layout follows POSIX.1-2008 "pax" (the ustar header: name[100] mode[8] uid[8] gid[8] size[12] mtime[12]
// chksum[8] typeflag linkname[100] magic "ustar\0" version "00" ... prefix[155]).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gp::test {

struct TarEntry {
  char type = '0';  // '0' file, '5' directory, '2' symbolic link, '1' hard link, '3' char device
  std::string name;
  std::string link;            // '1', '2': the target
  std::string data;            // '0': the contents
  uint64_t size = UINT64_MAX;  // the size the header declares (default: data.size())
  unsigned mode = 0644;
};

namespace tar_detail {

// `width - 1` octal digits and a NUL.
inline void Octal(char* field, size_t width, uint64_t value) {
  for (size_t i = width - 1; i-- > 0; value >>= 3) field[i] = static_cast<char>('0' + (value & 7));
  field[width - 1] = '\0';
}

// One pax record, "LEN key=value\n", where LEN counts itself.
inline std::string PaxRecord(const std::string& key, const std::string& value) {
  const size_t body = key.size() + value.size() + 3;  // ' ', '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

inline std::string Block(const std::string& name, char type, const std::string& link, uint64_t size,
                         unsigned mode) {
  std::string h(512, '\0');
  std::memcpy(&h[0], name.data(), std::min<size_t>(name.size(), 100));
  Octal(&h[100], 8, mode);
  Octal(&h[108], 8, 0);
  Octal(&h[116], 8, 0);
  Octal(&h[124], 12, size < (1ull << 33) ? size : 0);
  Octal(&h[136], 12, 1700000000);
  h[156] = type;
  std::memcpy(&h[157], link.data(), std::min<size_t>(link.size(), 100));
  std::memcpy(&h[257], "ustar", 6);
  h[263] = '0';
  h[264] = '0';
  std::memset(&h[148], ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  Octal(&h[148], 7, sum);
  h[155] = ' ';
  return h;
}

inline std::string Padded(std::string s) {
  s.resize((s.size() + 511) / 512 * 512, '\0');
  return s;
}

}  // namespace tar_detail

// The header block(s) of `e`, without its data.
inline std::string TarHeader(const TarEntry& e) {
  const uint64_t size = e.size == UINT64_MAX ? e.data.size() : e.size;
  std::string pax;
  if (e.name.size() > 100) pax += tar_detail::PaxRecord("path", e.name);
  if (e.link.size() > 100) pax += tar_detail::PaxRecord("linkpath", e.link);
  if (size >= (1ull << 33)) pax += tar_detail::PaxRecord("size", std::to_string(size));
  std::string out;
  if (!pax.empty()) out = tar_detail::Block("PaxHeader", 'x', "", pax.size(), 0644) + tar_detail::Padded(pax);
  return out + tar_detail::Block(e.name, e.type, e.link, e.type == '0' ? size : 0, e.mode);
}

// A whole archive: each entry's header(s) and data (padded to 512 bytes), then the two zero blocks.
inline std::string Tar(const std::vector<TarEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += TarHeader(e);
    if (e.type == '0') out += tar_detail::Padded(e.data);
  }
  return out + std::string(1024, '\0');
}

}  // namespace gp::test
