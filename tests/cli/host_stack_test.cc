// A host keeps its stack: without --manifest, doctor, plan and manifest list use the stack apply recorded in
// the host's /var/lib/gpuprep/status.json (a copy of a fixture tree, read with --root), refuse clearly when
// it cannot be used as recorded, and only a host never applied gets the default. `--manifest` names a move,
// which plan spells out.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "manifest/digest.h"
#include "manifest/loader.h"
#include "support/cli.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kOld = "hopper-r580-cuda13.0";
const std::string kNew = "hopper-r580.173.02-cuda13.0.3";

// A copy of the healthy H100 fixture (Ubuntu 22.04, R535 driver) to write a status.json into.
class Host {
 public:
  Host() {
    fs::copy(std::string(GP_FIXTURES) + "/hosts/healthy-h100", root(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::create_directories(root() + "/var/lib/gpuprep");
  }
  void Write(const std::string& path, const std::string& text) const { dir_.Write(path, text); }
  void Status(const json& doc) const { Write("/var/lib/gpuprep/status.json", doc.dump()); }
  gp::test::CliRun Run(std::vector<std::string> args) const {
    args.insert(args.end(), {"--root", root()});
    return gp::test::Gpuprep(args);
  }
  const std::string& root() const { return dir_.path; }

 private:
  gp::test::TempDir dir_{"gpuprep-hoststack"};
};

std::string Hash(const std::string& name) {
  return gp::manifest::ContentHash(gp::manifest::LoadStack(name, {}));
}

json Converged(const std::string& stack, const std::string& manifest, const std::string& hash) {
  return {
      {"stack", stack}, {"manifest", manifest}, {"content_hash", hash}, {"finished", "2026-11-30T10:05:00Z"}};
}

json Layer(const json& doc, const std::string& name) {
  for (const auto& l : doc["layers"])
    if (l["name"] == name) return l;
  FAIL("no layer " << name);
  return {};
}

}  // namespace

TEST_CASE("host stack: a host never applied gets the default, and says why", "[cli][host-stack]") {
  Host h;
  auto r = h.Run({"doctor", "--json"});
  CHECK(json::parse(r.out)["manifest"] == kNew);
  CHECK(r.err.find("gpuprep: using stack " + kNew +
                   ": the newest long-term-support stack (driver 580.173.02, R580 "
                   "LTS, CUDA 13.0.3) that supports ubuntu 22.04 and hopper GPUs") != std::string::npos);
  const json stack = Layer(json::parse(r.out), "stack");
  CHECK(stack["status"] == "ok");
  CHECK(stack["found"] == kNew);
  CHECK(stack["wanted"] == kNew);
}

TEST_CASE("host stack: a converged host keeps its stack; doctor warns a newer one exists",
          "[cli][host-stack]") {
  Host h;
  h.Status({{"stack", kOld},
            {"manifest", kOld},
            {"state", "done"},
            {"converged", Converged(kOld, kOld, Hash(kOld))}});
  auto r = h.Run({"doctor", "--json"});
  const json doc = json::parse(r.out);
  CHECK(doc["manifest"] == kOld);
  CHECK(r.err.find("using stack " + kOld +
                   ": the stack this host converged to (/var/lib/gpuprep/status.json); "
                   "another stack only with --manifest") != std::string::npos);
  const json stack = Layer(doc, "stack");
  CHECK(stack["status"] == "warn");
  CHECK(stack["found"] == kOld);
  CHECK(stack["wanted"] == kNew);
  REQUIRE(stack["findings"].size() == 1);
  CHECK(stack["findings"][0]["code"] == "stack.newer-available");
  CHECK(stack["findings"][0]["message"] ==
        "a newer stack exists for this host: " + kNew + " (driver 580.173.02, CUDA 13.0.3; this host's " +
            kOld + ": driver 580.95.05, CUDA 13.0.2); the host stays on its stack until moved");
  CHECK(stack["findings"][0]["fix"] == "review the move with: gpuprep plan --manifest " + kNew +
                                           "; make it with: sudo gpuprep apply --manifest " + kNew +
                                           " --yes (the driver changes: one reboot)");

  auto plan = h.Run({"plan", "--format", "json"});
  REQUIRE(plan.code == 0);
  const json p = json::parse(plan.out);
  CHECK(p["stack"] == kOld);
  CHECK(p["move"].is_null());  // no move without --manifest

  auto list = h.Run({"manifest", "list"});
  CHECK(list.out.find("this host's stack: " + kOld +
                      " (converged, /var/lib/gpuprep/status.json); doctor, plan "
                      "and apply keep it until --manifest names another") != std::string::npos);
  CHECK(list.out.find("default for a new host like this one: " + kNew +
                      ", the newest long-term-support stack") != std::string::npos);
  const json lj = json::parse(h.Run({"--json", "manifest", "list"}).out);
  CHECK(lj["default"]["name"] == kNew);
  CHECK(lj["host_stack"]["stack"] == kOld);
  CHECK(lj["host_stack"]["converged"] == true);
}

TEST_CASE("host stack: --manifest NEW is a move; plan lists every change and the reboot",
          "[cli][host-stack]") {
  Host h;
  h.Status({{"stack", kOld},
            {"manifest", kOld},
            {"state", "done"},
            {"converged", Converged(kOld, kOld, Hash(kOld))}});
  auto r = h.Run({"--manifest", kNew, "plan"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("moving this host from stack " + kOld + " (the stack it runs) to " + kNew + ":\n") !=
        std::string::npos);
  for (const char* line :
       {"  driver.version: 580.95.05 -> 580.173.02\n", "  cuda.version: 13.0.2 -> 13.0.3\n",
        "  cudnn.version: 9.12.0.46 -> 9.25.1.1\n", "  nccl.version: 2.27.7 -> 2.28.9\n",
        "  container_toolkit.version: 1.19.1 -> 1.20.0\n"})
    CHECK(r.out.find(line) != std::string::npos);
  CHECK(r.out.find("reboot: the new driver loads only after a reboot") != std::string::npos);
  const json p = json::parse(h.Run({"--manifest", kNew, "plan", "--format", "json"}).out);
  CHECK(p["move"]["from"] == kOld);
  CHECK(p["move"]["changes"].size() == 5);
  CHECK(p["move"]["changes"][0] ==
        json{{"field", "driver.version"}, {"from", "580.95.05"}, {"to", "580.173.02"}});
  CHECK(p["reboot"] == true);
}

TEST_CASE("host stack: a recorded stack that cannot be used as recorded stops with the command",
          "[cli][host-stack]") {
  Host h;
  SECTION("not embedded in this gpuprep") {
    h.Status({{"stack", "hopper-r999"},
              {"state", "done"},
              {"converged", Converged("hopper-r999", "hopper-r999", "")}});
    auto r = h.Run({"doctor"});
    CHECK(r.code == 2);
    CHECK(r.err ==
          "gpuprep: error: this host's stack hopper-r999, recorded in /var/lib/gpuprep/status.json, is not "
          "embedded in this gpuprep; gpuprep does not pick another stack by itself: choose one with "
          "--manifest (gpuprep manifest list)\n");
  }
  SECTION("its content changed since apply recorded it (a site file edited in place)") {
    const std::string site = "/etc/gpuprep/mine.yaml";
    h.Write(site, "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + kOld + "\nmetadata: {name: mine}\n");
    h.Status({{"stack", "mine"}, {"state", "done"}, {"converged", Converged("mine", site, Hash(kOld))}});
    auto ok =
        h.Run({"plan", "--format", "json"});  // the file read through the host's tree, content as recorded
    REQUIRE(ok.code == 0);
    CHECK(json::parse(ok.out)["stack"] == "mine");
    h.Write(site, "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + kOld +
                      "\nmetadata: {name: mine}\ndriver: {version: 580.173.02}\n");
    for (const char* verb : {"doctor", "plan"}) {
      auto r = h.Run({verb});
      CHECK(r.code == 2);
      CHECK(r.err.rfind("gpuprep: error: this host's stack mine (/etc/gpuprep/mine.yaml), recorded in "
                        "/var/lib/gpuprep/status.json, has changed since apply recorded it (content sha256:",
                        0) == 0);
      CHECK(r.err.find(
                "gpuprep does not move a host by itself: review the change with `gpuprep plan --manifest "
                "/etc/gpuprep/mine.yaml`, make it with `sudo gpuprep apply --manifest /etc/gpuprep/mine.yaml "
                "--yes`\n") != std::string::npos);
    }
    CHECK(h.Run({"--manifest", kOld, "plan"}).code == 0);  // --manifest still works
  }
  SECTION("its manifest file is gone") {
    h.Status({{"stack", "mine"},
              {"state", "done"},
              {"converged", Converged("mine", "/etc/gpuprep/gone.yaml", "")}});
    auto r = h.Run({"plan"});
    CHECK(r.code == 2);
    CHECK(r.err.rfind("gpuprep: error: this host's stack mine (/etc/gpuprep/gone.yaml), recorded in "
                      "/var/lib/gpuprep/status.json, cannot be loaded (",
                      0) == 0);
  }
  SECTION("status.json is not valid") {
    for (const std::string& text :
         {std::string("{not json"), std::string("[]"), json{{"stack", "x;rm -rf /"}}.dump(),
          json{{"stack", "a"}, {"manifest", "relative/path.yaml"}}.dump(),
          json{{"stack", "a"}, {"content_hash", "md5:00"}}.dump(),
          json{{"stack", "a"}, {"converged", "yes"}}.dump()}) {
      INFO(text);
      h.Write("/var/lib/gpuprep/status.json", text);
      auto r = h.Run({"doctor"});
      CHECK(r.code == 2);
      CHECK(r.err.rfind("gpuprep: error: /var/lib/gpuprep/status.json: ", 0) == 0);
      CHECK(r.err.find("; name the stack to use with --manifest (gpuprep manifest list)\n") !=
            std::string::npos);
    }
  }
}

TEST_CASE("host stack: older status.json files and interrupted moves", "[cli][host-stack]") {
  Host h;
  SECTION("written by an earlier gpuprep (no converged record, no hash): the stack of its last run") {
    h.Status({{"stack", kOld}, {"manifest", ""}, {"state", "done"}});
    auto r = h.Run({"doctor", "--json"});
    CHECK(json::parse(r.out)["manifest"] == kOld);
    CHECK(r.err.find(kOld +
                     " was recorded by an earlier gpuprep, without a content hash: taking it as it is now") !=
          std::string::npos);
  }
  SECTION("a move stopped for its reboot: the stack it moves to, until it converges") {
    h.Status({{"stack", kNew},
              {"manifest", kNew},
              {"content_hash", Hash(kNew)},
              {"state", "reboot-required"},
              {"converged", Converged(kOld, kOld, Hash(kOld))}});
    CHECK(json::parse(h.Run({"plan", "--format", "json"}).out)["stack"] == kNew);
  }
  SECTION("a move refused before any change: the host is still on its converged stack") {
    h.Status({{"stack", kNew},
              {"manifest", kNew},
              {"state", "refused"},
              {"converged", Converged(kOld, kOld, Hash(kOld))}});
    CHECK(json::parse(h.Run({"plan", "--format", "json"}).out)["stack"] == kOld);
  }
}

TEST_CASE("host stack: --manifest, then the site file, then the recorded stack, then the default",
          "[cli][host-stack]") {
  Host h;
  const std::string site =
      "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + kOld + "\nmetadata: {name: site}\n";
  h.Write("/etc/gpuprep/site.yaml", site);
  SECTION("a host never applied: the site file, not the default") {
    auto r = h.Run({"doctor", "--json"});
    const json doc = json::parse(r.out);
    CHECK(doc["manifest"] == "site");
    CHECK(r.err.find("gpuprep: using stack site: the site file " + h.root() +
                     "/etc/gpuprep/site.yaml; another stack only with --manifest\n") != std::string::npos);
    const json stack = Layer(doc, "stack");
    CHECK(stack["status"] == "warn");
    CHECK(stack["found"] == "site (the content of " + kOld + ")");
    REQUIRE(stack["findings"].size() == 1);
    CHECK(stack["findings"][0]["code"] == "stack.newer-available");
    // Moving a site-file host starts with the file: --manifest NEW alone would leave it naming the old stack.
    CHECK(stack["findings"][0]["fix"] ==
          "make /etc/gpuprep/site.yaml extend " + kNew + " instead of " + kOld +
              "; review the move with: gpuprep plan --manifest /etc/gpuprep/site.yaml; "
              "make it with: sudo gpuprep apply --manifest /etc/gpuprep/site.yaml "
              "--yes (the driver changes: one reboot)");
    auto table = h.Run({"doctor"});
    CHECK(table.out.find("a newer stack exists for this host: " + kNew) != std::string::npos);
    CHECK(table.out.find("make /etc/gpuprep/site.yaml extend " + kNew) != std::string::npos);
  }
  SECTION("--manifest wins over the site file") {
    auto r = h.Run({"--manifest", kNew, "plan", "--format", "json"});
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out)["stack"] == kNew);
  }
  SECTION("the site file wins over the recorded stack when it has the recorded content") {
    h.Status({{"stack", kOld},
              {"manifest", kOld},
              {"state", "done"},
              {"converged", Converged(kOld, kOld, Hash(kOld))}});
    auto r = h.Run({"plan", "--format", "json"});
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out)["stack"] == "site");
    CHECK(json::parse(r.out)["move"].is_null());
    CHECK(r.err.find("using stack site: the site file " + h.root() +
                     "/etc/gpuprep/site.yaml, with the content of the stack this host converged to; another "
                     "stack only with --manifest") != std::string::npos);
  }
  SECTION("a site file with other pins than the host converged to moves nothing by itself") {
    h.Status({{"stack", kOld},
              {"manifest", kOld},
              {"state", "done"},
              {"converged", Converged(kOld, kOld, Hash(kOld))}});
    h.Write("/etc/gpuprep/site.yaml",
            "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + kNew + "\nmetadata: {name: site}\n");
    for (const char* verb : {"doctor", "plan"}) {
      auto r = h.Run({verb});
      CHECK(r.code == 2);
      CHECK(r.err.rfind("gpuprep: error: the site file " + h.root() +
                            "/etc/gpuprep/site.yaml (stack site, content sha256:",
                        0) == 0);
      CHECK(r.err.find(") is not the stack this host converged to, " + kOld + " (content sha256:") !=
            std::string::npos);
      CHECK(
          r.err.find(
              "recorded in /var/lib/gpuprep/status.json); gpuprep does not move a host by itself: review the "
              "change with `gpuprep plan --manifest " +
              h.root() + "/etc/gpuprep/site.yaml`, make it with `sudo gpuprep apply --manifest " + h.root() +
              "/etc/gpuprep/site.yaml --yes`\n") != std::string::npos);
    }
  }
  SECTION("a bad site file: its line and column, exit 2") {
    h.Write("/etc/gpuprep/site.yaml", site + "drivr: {}\n");
    auto r = h.Run({"doctor"});
    CHECK(r.code == 2);
    CHECK(r.err.rfind("gpuprep: error: " + h.root() + "/etc/gpuprep/site.yaml:5:1: unknown key \"drivr\"",
                      0) == 0);  // the tree's file, named under --root
  }
}

TEST_CASE("host stack: manifest list names the site file", "[cli][host-stack]") {
  Host h;
  h.Write("/etc/gpuprep/site.yaml",
          "apiVersion: gpuprep/v1\nkind: Stack\nextends: " + kOld + "\nmetadata: {name: site}\n");
  auto list = h.Run({"manifest", "list"});
  CHECK(list.out.find(
            "this host's site file: /etc/gpuprep/site.yaml (stack site); doctor, plan and apply use it "
            "before the stack apply recorded\n") != std::string::npos);
  const json lj = json::parse(h.Run({"--json", "manifest", "list"}).out);
  CHECK(lj["site_file"] == json{{"path", "/etc/gpuprep/site.yaml"}, {"stack", "site"}});
  h.Status({{"stack", kNew},
            {"manifest", kNew},
            {"state", "done"},
            {"converged", Converged(kNew, kNew, Hash(kNew))}});
  const json other = json::parse(h.Run({"--json", "manifest", "list"}).out);
  CHECK(other["site_file"].is_null());
  CHECK(other["site_file_error"].get<std::string>().rfind(
            "the site file " + h.root() + "/etc/gpuprep/site.yaml (stack site", 0) == 0);
}
