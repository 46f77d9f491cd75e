#include "apt/keyring.h"

#include <cctype>
#include <cstdint>

#include "util/strings.h"

namespace gp::apt {

bool IsArmored(const std::string& data) {
  return data.find("-----BEGIN PGP PUBLIC KEY BLOCK-----") != std::string::npos;
}

namespace {
int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

namespace {

std::optional<std::string> DecodeBase64(const std::string& b64) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : b64) {
    if (c == '=') break;
    int v = B64Value(c);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

// RFC 4880 6.1 CRC-24 (init 0xB704CE, generator 0x1864CFB).
uint32_t Crc24(const std::string& data) {
  uint32_t crc = 0xB704CEu;
  for (unsigned char c : data) {
    crc ^= static_cast<uint32_t>(c) << 16;
    for (int k = 0; k < 8; ++k) {
      crc <<= 1;
      if (crc & 0x1000000u) crc ^= 0x1864CFBu;
    }
  }
  return crc & 0xFFFFFFu;
}

}  // namespace

std::optional<std::string> Dearmor(const std::string& armored) {
  const std::string begin = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
  const std::string end = "-----END PGP PUBLIC KEY BLOCK-----";
  size_t b = armored.find(begin);
  size_t e = armored.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return std::nullopt;
  auto lines = Split(armored.substr(b + begin.size(), e - b - begin.size()), '\n');
  // lines[0] is the rest of the BEGIN line. Armor headers ("Version: ...") run until the first blank line;
  // then base64, then "=CRC".
  size_t i = 1;
  if (i < lines.size() && lines[i].find(':') != std::string::npos) {
    while (i < lines.size() && !Trim(lines[i]).empty()) ++i;
  }
  std::string b64, crc_line;
  for (; i < lines.size(); ++i) {
    std::string line(Trim(lines[i]));
    if (line.empty()) continue;
    if (line[0] == '=') {  // the CRC24 line
      crc_line = line.substr(1);
      break;
    }
    b64 += line;
  }
  auto out = DecodeBase64(b64);
  if (!out || out->empty()) return std::nullopt;
  // RFC 4880 6.1: the armor checksum is a CRC24 of the binary data; a mismatch means a damaged key,
  // and gpg --dearmor (the plan's shell script) refuses it too.
  if (!crc_line.empty()) {
    auto crc = DecodeBase64(crc_line);
    if (!crc || crc->size() != 3) return std::nullopt;
    const uint32_t want = (static_cast<uint32_t>(static_cast<unsigned char>((*crc)[0])) << 16) |
                          (static_cast<uint32_t>(static_cast<unsigned char>((*crc)[1])) << 8) |
                          static_cast<uint32_t>(static_cast<unsigned char>((*crc)[2]));
    if (Crc24(*out) != want) return std::nullopt;
  }
  return out;
}

std::string NormalizeFingerprint(const std::string& fpr) {
  std::string out;
  for (char c : fpr)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> PrimaryFingerprints(const std::string& colons) {
  std::vector<std::string> out;
  bool want = false;
  for (const auto& line : Split(colons, '\n')) {
    auto fields = Split(line, ':');
    if (fields.empty()) continue;
    if (fields[0] == "pub") {
      want = true;
    } else if (fields[0] == "fpr" && want) {
      if (fields.size() > 9) out.push_back(NormalizeFingerprint(fields[9]));
      want = false;
    }
  }
  return out;
}

}  // namespace gp::apt
