// Key checks are the same in apply and in `plan --format sh`: the armor checksum is verified (as
// gpg --dearmor does), both pins are checked when both are given, and only the pinned primary key is kept.
#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apt/keyring.h"
#include "plan/plan.h"
#include "plan/render.h"
#include "sys/process.h"

using namespace gp;

namespace {
std::string Armor(const std::string& body, const std::string& crc) {
  return "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n" + body + "\n=" + crc +
         "\n-----END PGP PUBLIC KEY BLOCK-----\n";
}
}  // namespace

TEST_CASE("Dearmor checks the CRC24 line", "[apt][keyring]") {
  const std::string body = "mQENZ3B1cHJlcC10ZXN0LWtleQ==";  // 0x99 0x01 0x0d "gpuprep-test-key"
  auto ok = apt::Dearmor(Armor(body, "UFEC"));
  REQUIRE(ok);
  CHECK(*ok == std::string("\x99\x01\x0dgpuprep-test-key"));
  CHECK_FALSE(apt::Dearmor(Armor(body, "UFED")));                            // one bit off
  CHECK_FALSE(apt::Dearmor(Armor("nQENZ3B1cHJlcC10ZXN0LWtleQ==", "UFEC")));  // damaged data
}

TEST_CASE("plan --format sh checks every pin apply checks, on primary keys only", "[plan][keyring]") {
  plan::Plan p;
  p.stack = "s";
  plan::Step step;
  step.id = "repo.cuda.key";
  plan::Action a;
  a.kind = plan::Action::Kind::kFetch;
  a.url = "https://repo.example/key.gpg";
  a.path = "/usr/share/keyrings/cuda.gpg";
  a.sha256 = std::string(64, 'a');
  a.fingerprint = "EB693B3035CD5710E231E123A4B469963BF863CC";
  step.actions.push_back(a);
  p.steps.push_back(step);
  const std::string sh = plan::RenderSh(p);
  CHECK(sh.find("sha256sum --check --quiet") != std::string::npos);
  // Only the pinned primary key is exported into the keyring, and only when gpg reads that key alone in it.
  const std::string gpg = "gpg --batch --quiet --no-autostart --homedir \"$tmp/gnupg1\"";
  CHECK(sh.find(gpg + " --import \"$tmp/key1\" || true\n") != std::string::npos);
  CHECK(sh.find(gpg + " --export EB693B3035CD5710E231E123A4B469963BF863CC > \"$tmp/key1.pinned\"\n") !=
        std::string::npos);
  const std::string fpr_check =
      " --show-keys --with-colons \"$tmp/key1.pinned\" | awk -F: '$1 == \"pub\" { p = 1; next } $1 == "
      "\"fpr\" && p "
      "{ print $10; p = 0 }')\" != EB693B3035CD5710E231E123A4B469963BF863CC ]; then";
  CHECK(sh.find(fpr_check) != std::string::npos);
  CHECK(sh.find("gpuprep_write /usr/share/keyrings/cuda.gpg 0644 backup < \"$tmp/key1.pinned\"\n") !=
        std::string::npos);
  CHECK(sh.find("--dearmor") == std::string::npos);  // the whole file never becomes the keyring

  // The awk program picks primary fingerprints, not subkeys': run it on gpg's colon format.
  const std::string colons =
      "pub:-:4096:1:A4B469963BF863CC:1:::-:::scESC::::::23::0:\n"
      "fpr:::::::::EB693B3035CD5710E231E123A4B469963BF863CC:\n"
      "uid:-::::1::X::cudatools <cudatools@nvidia.com>::::::::::0:\n"
      "sub:-:4096:1:1111111111111111:1::::::e::::::23:\n"
      "fpr:::::::::1111111111111111111111111111111111111111:\n";
  sys::RealCommandRunner run;
  sys::Command c;
  c.argv = {"awk", "-F:", "$1 == \"pub\" { p = 1; next } $1 == \"fpr\" && p { print $10; p = 0 }"};
  c.stdin_data = colons;
  auto r = run.Run(c);
  CHECK(r.out == "EB693B3035CD5710E231E123A4B469963BF863CC\n");
}
