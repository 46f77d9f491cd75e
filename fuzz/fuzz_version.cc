// Debian version ordering, differential against apt's own implementation (libapt-pkg's debVersioningSystem,
// the code apt uses to pick candidates): for two well-formed versions, CompareDebVersions must give the
// same sign. Also: Version::Parse and DebVersion::Parse never crash, and Compare is antisymmetric.
#include <apt-pkg/debversion.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/input.h"
#include "util/version.h"

namespace {
int Sign(int v) { return (v > 0) - (v < 0); }

// An epoch alone ("1:"): the blank-but-epoch version dpkg's own tests compare (t-version.c: epochs 1 and 2
// differ). The oracle once fed only well-formed upstreams, so it missed gpuprep calling "1:" and "2:" equal.
// Two of them are compared with apt; one against a full version is not: dpkg reads the empty upstream as
// equal to "0", apt as lower than anything.
bool EpochAlone(const std::string& v) {
  return v.size() >= 2 && v.size() <= 10 && v.back() == ':' &&
         v.find_first_not_of("0123456789") == v.size() - 1;
}

// deb-version(7): [epoch:]upstream[-revision], upstream starting with a digit.
bool WellFormed(const std::string& v) {
  if (!gp::ValidDebVersion(v)) return false;
  std::string rest = v;
  const size_t colon = rest.find(':');
  if (colon != std::string::npos) {
    const std::string epoch = rest.substr(0, colon);
    if (epoch.empty() || epoch.size() > 9 || epoch.find_first_not_of("0123456789") != std::string::npos)
      return false;
    rest = rest.substr(colon + 1);
  }
  if (rest.find(':') != std::string::npos) return false;
  const size_t dash = rest.rfind('-');
  const std::string upstream = dash == std::string::npos ? rest : rest.substr(0, dash);
  if (dash != std::string::npos && dash + 1 >= rest.size()) return false;
  return !upstream.empty() && upstream[0] >= '0' && upstream[0] <= '9';
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const size_t sep = in.find('\n');
  const std::string a = in.substr(0, sep);
  const std::string b = sep == std::string::npos ? std::string() : in.substr(sep + 1);

  const int ours = Sign(gp::CompareDebVersions(a, b));
  if (ours != -Sign(gp::CompareDebVersions(b, a))) std::abort();
  if (gp::CompareDebVersions(a, a) != 0) std::abort();
  if ((WellFormed(a) && WellFormed(b)) || (EpochAlone(a) && EpochAlone(b))) {
    const int apt = Sign(debVS.CmpVersion(a, b));
    if (ours != apt) std::abort();
  }
  (void)gp::DebVersion::Parse(a);
  auto va = gp::Version::Parse(a);
  auto vb = gp::Version::Parse(b);
  if (va && vb && Sign(Compare(*va, *vb)) != -Sign(Compare(*vb, *va))) std::abort();
  return 0;
}
