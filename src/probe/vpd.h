// PCI Vital Product Data (the sysfs `vpd` file of a PCI function), parsed as the PCI Local Bus
// Specification 3.0, Appendix I ("Vital Product Data"), lays it out: a sequence of resource data tags,
// large ones (bit 7 set: the item name in bits 6..0, then a 16-bit little-endian length) and small ones
// (bit 7 clear: the item name in bits 6..3, the length in bits 2..0). The tags that matter here:
//   0x82 identifier string, 0x90 VPD-R (read-only keywords), 0x91 VPD-W (read-write keywords), 0x78 end.
// Inside VPD-R and VPD-W each keyword is two ASCII characters, a one-byte length and that many bytes of
// data. VPD-R ends with the "RV" keyword, whose first data byte makes the sum of every byte from the start
// of the VPD through it zero (the checksum). "V0".."VZ" are vendor-specific read-only keywords.
//
// The input is hostile: any length that runs past the data, a tag out of place, a missing end, a bad
// checksum or more than kMaxVpdBytes make the result invalid (with the reason), never a crash or a read
// past the buffer. Pure: no system access.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gp::probe {

// The PCI VPD address space is 15 bits (PCI Local Bus Specification 3.0, I.3: "VPD Address" is 15 bits).
inline constexpr size_t kMaxVpdBytes = 32768;

struct VpdKeyword {
  std::string keyword;    // "PN", "SN", "V3"
  std::string value;      // the data bytes as they are (binary for RV/RW)
  bool writable = false;  // from VPD-W
};

struct Vpd {
  bool valid = false;      // parsed through the end tag with every length in bounds and the checksum right
  std::string error;       // why not ("" when valid)
  std::string identifier;  // the 0x82 string (product name)
  std::vector<VpdKeyword> keywords;
};

// Parses `bytes` (a sysfs vpd file; trailing bytes after the end tag are ignored, as the kernel may pad).
Vpd ParseVpd(std::string_view bytes);

// True when a valid VPD marks the function as an NVLink switch bridge of an HGX Blackwell baseboard (a
// ConnectX-7 function that manages the baseboard's NVSwitches): a vendor-specific keyword ("V" + one
// character) whose value carries the field SMDL=SW_MNG. Mellanox/NVIDIA adapters write such values as
// ';'-separated NAME=VALUE fields after an optional "MLX:" prefix ("MLX:MN=MLNX;CSKU=V2;..."), where a value
// may name another vendor-specific keyword holding the text ("CSKU=V2"): SMDL=Vx with Vx = "SW_MNG" counts
// too. Fabric Manager user guide (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/),
// "NVIDIA HGX B200/B100 GPU Baseboard": the NVSwitches are reached through ConnectX-7 bridge functions
// (PCI 15b3:1021) whose VPD holds SMDL=SW_MNG; ordinary ConnectX-7 NICs share the id without that field.
bool IsNvlinkSwitchBridge(const Vpd& vpd);

}  // namespace gp::probe
