// The PCI VPD parser (probe/vpd.h) on images built here per the PCI VPD format (synthetic: made-up part
// numbers), and on broken ones: truncated, wrong lengths, wrong checksum, giant lengths, random bytes.
#include "probe/vpd.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace gp;
using probe::IsNvlinkSwitchBridge;
using probe::ParseVpd;

namespace {

std::string Large(unsigned char tag, const std::string& data) {
  std::string out(1, static_cast<char>(tag));
  out += static_cast<char>(data.size() & 0xff);
  out += static_cast<char>((data.size() >> 8) & 0xff);
  return out + data;
}

std::string Keyword(const std::string& name, const std::string& value) {
  return name + static_cast<char>(value.size()) + value;
}

// Identifier, VPD-R with `fields` and RV (its checksum right unless `checksum_delta`), VPD-W with RW, end.
std::string Image(const std::vector<std::pair<std::string, std::string>>& fields, int checksum_delta = 0) {
  std::string body;
  for (const auto& [k, v] : fields) body += Keyword(k, v);
  const size_t rv_len = 4;
  std::string head = Large(0x82, "ConnectX-7 (synthetic)");
  const size_t r_len = body.size() + 3 + rv_len;
  head += static_cast<char>(0x90);
  head += static_cast<char>(r_len & 0xff);
  head += static_cast<char>(r_len >> 8);
  head += body + "RV" + static_cast<char>(rv_len);
  unsigned sum = 0;
  for (char c : head) sum += static_cast<unsigned char>(c);
  head += static_cast<char>((0x100 - (sum & 0xff) + checksum_delta) & 0xff);
  head += std::string(rv_len - 1, '\0');
  return head + Large(0x91, Keyword("RW", std::string(16, '\0'))) + "\x78";
}

const std::vector<std::pair<std::string, std::string>> kNic = {
    {"PN", "SYNTHETIC-NIC"},
    {"SN", "SYNTH0001"},
    {"V2", "SYNTHETIC-NIC"},
    {"VA", "MLX:MN=MLNX;CSKU=V2;UUID=V3;PCI=V0;MODL=CX7"}};

}  // namespace

TEST_CASE("VPD: a well-formed image parses to its identifier and keywords", "[probe][vpd]") {
  auto v = ParseVpd(Image(kNic));
  INFO(v.error);
  REQUIRE(v.valid);
  CHECK(v.identifier == "ConnectX-7 (synthetic)");
  REQUIRE(v.keywords.size() == 6);  // PN SN V2 VA RV RW
  CHECK(v.keywords[0].keyword == "PN");
  CHECK(v.keywords[0].value == "SYNTHETIC-NIC");
  CHECK(v.keywords[4].keyword == "RV");
  CHECK(v.keywords[5].keyword == "RW");
  CHECK(v.keywords[5].writable);
  CHECK_FALSE(IsNvlinkSwitchBridge(v));  // an ordinary ConnectX-7 NIC
  // Padding after the end tag (the kernel may return more than the VPD) is ignored.
  CHECK(ParseVpd(Image(kNic) + std::string(64, '\xff')).valid);
}

TEST_CASE("VPD: SMDL=SW_MNG marks an NVLink switch bridge, directly or through a keyword", "[probe][vpd]") {
  auto fields = kNic;
  fields[3].second += ";SMDL=SW_MNG";
  CHECK(IsNvlinkSwitchBridge(ParseVpd(Image(fields))));
  // The Mellanox style where a field names the keyword holding the text ("CSKU=V2").
  auto indirect = kNic;
  indirect[3].second += ";SMDL=V5";
  indirect.push_back({"V5", "SW_MNG"});
  CHECK(IsNvlinkSwitchBridge(ParseVpd(Image(indirect))));
  // The value alone, without the field name, or a similar value, is not it.
  auto other = kNic;
  other.push_back({"V5", "SW_MNG"});
  CHECK_FALSE(IsNvlinkSwitchBridge(ParseVpd(Image(other))));
  auto near = kNic;
  near[3].second += ";SMDL=SW_MNGX;XSMDL=SW_MNG";
  CHECK_FALSE(IsNvlinkSwitchBridge(ParseVpd(Image(near))));
  // In a read-only non-vendor keyword (PN) it does not count.
  auto pn = kNic;
  pn[0].second = "SMDL=SW_MNG";
  CHECK_FALSE(IsNvlinkSwitchBridge(ParseVpd(Image(pn))));
  // Trailing spaces and NULs (fixed-width fields) are tolerated.
  auto padded = kNic;
  padded[3].second += ";SMDL=SW_MNG  ";
  CHECK(IsNvlinkSwitchBridge(ParseVpd(Image(padded))));
}

TEST_CASE("VPD: a wrong checksum makes the image invalid, so no bridge", "[probe][vpd]") {
  auto fields = kNic;
  fields[3].second += ";SMDL=SW_MNG";
  auto v = ParseVpd(Image(fields, 1));
  CHECK_FALSE(v.valid);
  CHECK(v.error.find("checksum") != std::string::npos);
  CHECK_FALSE(IsNvlinkSwitchBridge(v));
}

TEST_CASE("VPD: truncated images are invalid at every cut, never read past the data", "[probe][vpd]") {
  auto fields = kNic;
  fields[3].second += ";SMDL=SW_MNG";
  const std::string full = Image(fields);
  REQUIRE(ParseVpd(full).valid);
  for (size_t cut = 0; cut < full.size(); ++cut) {
    auto v = ParseVpd(full.substr(0, cut));
    INFO("cut at " << cut << ": " << v.error);
    CHECK_FALSE(v.valid);
    CHECK_FALSE(v.error.empty());
    CHECK_FALSE(IsNvlinkSwitchBridge(v));
  }
}

TEST_CASE("VPD: bad and giant lengths, tags out of place, oversized input", "[probe][vpd]") {
  const std::string good = Image(kNic);
  // The identifier's length claims 0xffff bytes.
  std::string giant = good;
  giant[1] = '\xff';
  giant[2] = '\xff';
  CHECK(ParseVpd(giant).error.find("past the end") != std::string::npos);
  // A keyword's length runs past its VPD-R resource.
  std::string kw = good;
  const size_t pn = kw.find("PN");
  kw[pn + 2] = '\xf0';
  CHECK_FALSE(ParseVpd(kw).valid);
  // VPD-R's length runs past the data.
  std::string r = good;
  const size_t tag = r.find('\x90');
  r[tag + 2] = '\x7f';
  CHECK_FALSE(ParseVpd(r).valid);
  // No VPD-R at all; an unknown tag; the identifier not first; a second VPD-R.
  CHECK_FALSE(ParseVpd(Large(0x82, "x") + "\x78").valid);
  CHECK(ParseVpd(std::string("\x84\x01\x00x\x78", 5)).error.find("unexpected large") != std::string::npos);
  CHECK_FALSE(ParseVpd(std::string(16, '\0')).valid);
  CHECK_FALSE(ParseVpd(std::string(16, '\xff')).valid);
  const std::string vpd_r = good.substr(tag, good.find('\x91') - tag);
  CHECK_FALSE(ParseVpd(good.substr(0, tag) + vpd_r + vpd_r + "\x78").valid);
  CHECK_FALSE(ParseVpd(vpd_r + Large(0x82, "late") + "\x78").valid);
  CHECK(ParseVpd("").error == "empty");
  CHECK_FALSE(ParseVpd(good + std::string(probe::kMaxVpdBytes, '\0')).valid);
  // A keyword name of control bytes.
  std::string name = good;
  name[pn] = '\x01';
  CHECK_FALSE(ParseVpd(name).valid);
}

TEST_CASE("VPD: random and mutated bytes never crash the parser", "[probe][vpd]") {
  std::mt19937 rng(20261202);
  auto fields = kNic;
  fields[3].second += ";SMDL=SW_MNG";
  const std::string good = Image(fields);
  int valid = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) s[rng() % s.size()] = static_cast<char>(rng() & 0xff);
    auto v = ParseVpd(s);
    if (v.valid) ++valid;
    CHECK((v.valid || !v.error.empty()));
    std::string noise(rng() % 512, '\0');
    for (char& c : noise) c = static_cast<char>(rng() & 0xff);
    ParseVpd(noise);
  }
  // Most single-byte changes break the checksum or a length.
  CHECK(valid < 3000);
}
