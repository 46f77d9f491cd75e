// DownloadKey with the real gpg: a key file holding the pinned key and another one yields a keyring with
// the pinned key alone, so apt never trusts the other key for the repository.
#include "apply/keys.h"

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "apt/keyring.h"
#include "util/strings.h"

using namespace gp;

namespace {

// Two throwaway signing keys made by the real gpg in a home of their own.
struct TwoKeys {
  test::TempRoot home_root;  // its directory is the GnuPG home
  const std::string& home = home_root.path();
  sys::RealCommandRunner runner;
  std::string first, second;  // primary fingerprints
  std::string both_armored;   // `gpg --armor --export FIRST SECOND`
  std::string both_binary;    // `gpg --export FIRST SECOND`

  sys::CommandResult Gpg(std::vector<std::string> args, std::optional<std::string> in = std::nullopt) {
    sys::Command c;
    c.argv = {"gpg", "--batch", "--quiet", "--no-autostart", "--homedir", home};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.stdin_data = std::move(in);
    return runner.Run(c);
  }
  std::string Make(const std::string& who) {
    sys::Command c;  // key generation needs the agent: no --no-autostart
    c.argv = {"gpg", "--batch",         "--quiet", "--homedir", home,   "--passphrase",
              "",    "--quick-gen-key", who,       "ed25519",   "sign", "never"};
    REQUIRE(runner.Run(c).ok());
    auto out = Gpg({"--with-colons", "--fingerprint", who});
    auto fprs = apt::PrimaryFingerprints(out.out);
    REQUIRE(fprs.size() == 1);
    return fprs[0];
  }
  TwoKeys() {
    first = Make("pinned <pinned@localhost>");
    second = Make("other <other@localhost>");
    both_armored = Gpg({"--armor", "--export", first, second}).out;
    both_binary = Gpg({"--export", first, second}).out;
  }
  ~TwoKeys() {
    sys::Command c;
    c.argv = {"gpgconf", "--homedir", home, "--kill", "all"};
    runner.Run(c);
  }
  // The primary fingerprints gpg reads in `key`.
  std::vector<std::string> Primaries(const std::string& key) {
    return apt::PrimaryFingerprints(Gpg({"--show-keys", "--with-colons"}, key).out);
  }
};

}  // namespace

TEST_CASE("a key file with the pinned key and another: only the pinned key is kept", "[apply][keys]") {
  TwoKeys keys;
  REQUIRE(keys.Primaries(keys.both_armored).size() == 2);
  for (const std::string* file : {&keys.both_armored, &keys.both_binary}) {
    test::TempRoot root;
    test::FakeHttp http;
    http.answers["https://repo.example/key.asc"] = {200, *file, ""};
    sys::RealCommandRunner runner;
    auto got = apply::DownloadKey("https://repo.example/key.asc", "", keys.first, root.fs(), runner, http);
    REQUIRE(got.ok());
    CHECK(keys.Primaries(got.key) == std::vector<std::string>{keys.first});
    CHECK_FALSE(apt::IsArmored(got.key));
    // Nothing of the check is left behind: no download, no temporary GnuPG home.
    CHECK(root.fs().List("/var/lib/gpuprep/tmp").empty());
  }
}

TEST_CASE("a key file pinned by its second key keeps that key alone", "[apply][keys]") {
  TwoKeys keys;
  test::TempRoot root;
  test::FakeHttp http;
  http.answers["https://repo.example/key.asc"] = {200, keys.both_armored, ""};
  sys::RealCommandRunner runner;
  auto got = apply::DownloadKey("https://repo.example/key.asc", "", keys.second, root.fs(), runner, http);
  REQUIRE(got.ok());
  CHECK(keys.Primaries(got.key) == std::vector<std::string>{keys.second});
}

TEST_CASE("a key file without the pinned key is refused, nothing written", "[apply][keys]") {
  TwoKeys keys;
  test::TempRoot root;
  test::FakeHttp http;
  const std::string only_second = keys.Gpg({"--export", keys.second}).out;
  http.answers["https://repo.example/key.gpg"] = {200, only_second, ""};
  sys::RealCommandRunner runner;
  auto got = apply::DownloadKey("https://repo.example/key.gpg", "", keys.first, root.fs(), runner, http);
  CHECK(got.error == "https://repo.example/key.gpg: key fingerprint mismatch: the key is " + keys.second +
                         ", the stack pins " + keys.first + "; nothing was written");
  CHECK(root.fs().List("/var/lib/gpuprep/tmp").empty());
}
