// The real binary on a stack that names a private key (`extends:` a path outside its directory, a linked
// `workload.task`) and on the key itself: exit 2 and one line naming the file, never the key's text.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "apply/harness.h"
#include "sys/process.h"

using namespace gp;

namespace {

const std::string kPrivateKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBGQUtFLUtFWS1GT1ItVEVTVFMtT05MWS0wMDAwMDAwMDAwAAAAmFBSSVZB\n"
    "-----END OPENSSH PRIVATE KEY-----\n";

sys::CommandResult ValidateWithBinary(const std::string& path) {
  sys::RealCommandRunner run;
  sys::Command c;
  c.argv = {GP_BINARY, "manifest", "validate", path};
  return run.Run(c);
}

}  // namespace

TEST_CASE("manifest validate: a stack naming a private key, and the key itself",
          "[cli][manifest][file_refs]") {
  test::TempRoot t;
  t.Write("/keys/id_ed25519", kPrivateKey);
  char* real = ::realpath(t.path().c_str(), nullptr);
  REQUIRE(real);
  const std::string dir(real);
  ::free(real);
  const std::string outside =
      ", outside " + dir + "/site/ (the directory of the file that names it) and /etc/gpuprep/\n";

  t.Write("/site/s.yaml",
          "apiVersion: gpuprep/v1\nkind: Stack\nextends: ../keys/id_ed25519\nmetadata: {name: c}\n");
  sys::CommandResult r = ValidateWithBinary(dir + "/site/s.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "gpuprep: error: " + dir + "/site/s.yaml:3:10: extends \"../keys/id_ed25519\": leads to " +
                     dir + "/keys/id_ed25519" + outside);

  t.Symlink(dir + "/keys/id_ed25519", "/site/task.yaml");
  t.Write("/site/w.yaml",
          "apiVersion: gpuprep/v1\nkind: Stack\nextends: ubuntu22.04-r535-cuda12.2\nmetadata: {name: w}\n"
          "workload: {task: task.yaml}\n");
  r = ValidateWithBinary(dir + "/site/w.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "gpuprep: error: " + dir +
                     "/site/w.yaml:5:18: workload.task \"task.yaml\": leads through a " +
                     "symbolic link to " + dir + "/keys/id_ed25519" + outside);

  r = ValidateWithBinary(dir + "/keys/id_ed25519");
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "gpuprep: error: " + dir +
            "/keys/id_ed25519:1:1: expected a gpuprep document (a map with apiVersion and kind), got a "
            "string\n");
}
