// One escape for every terminal: the same hostile strings (OSC 52 clipboard write, screen clear, hidden
// text, a C1 CSI as UTF-8 and as a lone byte, the bidi overrides U+202E and U+2066, DEL, ill-formed UTF-8)
// put in every outside text gpuprep reads (snapshots, recordings, probed files, manifests) and printed by
// every text printer: none reaches stdout or stderr raw.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apply/harness.h"
#include "fleet/model.h"
#include "fleet/render.h"
#include "support/cli.h"
#include "util/input.h"

using gp::test::Gpuprep;
using nlohmann::json;

namespace {

// Each one alone, then all together.
const std::vector<std::string> kHostile = {
    "\x1b]52;c;aGVsbG8=\x07",  // OSC 52: write the clipboard
    "\x1b[2J",                 // clear the screen
    "\x1b[8m",                 // hide the text that follows
    "\xc2\x9b"
    "31m",  // C1 CSI (U+009B) as UTF-8
    "\x9b"
    "2J",            // C1 CSI as one byte (ill-formed UTF-8)
    "\xe2\x80\xae",  // U+202E RIGHT-TO-LEFT OVERRIDE
    "\xe2\x81\xa6",  // U+2066 LEFT-TO-RIGHT ISOLATE
    "\x7f",          // DEL
    "\xff\xfe",      // ill-formed UTF-8
};

// The well-formed ones (what a JSON document can carry), joined.
std::string HostileUtf8() {
  std::string s;
  for (const std::string& h : kHostile)
    if (!gp::InvalidUtf8At(h)) s += h;
  return s;
}

bool IsBidiControl(const std::string& s, size_t i) {
  if (i + 2 >= s.size() || static_cast<unsigned char>(s[i]) != 0xE2) return false;
  const auto b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
  return (b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9);
}

// "" when `out` holds nothing a terminal would act on (line breaks and tabs aside), else what it holds.
std::string RawLeak(const std::string& out) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (auto at = gp::InvalidUtf8At(line))
      return "ill-formed UTF-8 at byte " + std::to_string(*at) + ": " + line;
    if (auto at = gp::ControlCharAt(line, /*allow_text=*/true))
      return "control character at byte " + std::to_string(*at) + ": " + gp::TerminalSafe(line);
    for (size_t i = 0; i < line.size(); ++i)
      if (IsBidiControl(line, i)) return "bidi control at byte " + std::to_string(i) + ": " + line;
  }
  return "";
}

void CheckClean(const gp::test::CliRun& r, const std::string& what) {
  INFO(what << " (exit " << r.code << ")");
  CHECK(RawLeak(r.out) == "");
  CHECK(RawLeak(r.err) == "");
}

std::string FixturePath(const std::string& rel) { return std::string(GP_FIXTURES) + "/" + rel; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A doctor snapshot whose hostname, OS name, GPU names and one failing layer's detail and fix carry `h`.
std::string HostileSnapshot(const std::string& dir, const std::string& fixture, const std::string& h) {
  json d = json::parse(ReadAll(FixturePath("snapshots/" + fixture)));
  d["host"]["hostname"] = "node" + h;
  d["host"]["os"]["pretty_name"] = "Ubuntu" + h;
  for (json& g : d["host"]["gpus"]) g["name"] = g["name"].get<std::string>() + h;
  json& layer = d["layers"][0];
  layer["status"] = "fail";
  layer["detail"] = "broken" + h;
  layer["fix"] = "apt-get install x" + h;
  const std::string path = dir + "/" + fixture;
  std::ofstream(path, std::ios::binary) << d.dump(2);
  return path;
}

}  // namespace

TEST_CASE("TerminalSafe: no hostile string survives raw, each escape readable", "[util][input][terminal]") {
  std::string all;
  for (const std::string& h : kHostile) {
    all += h;
    const std::string safe = gp::TerminalSafe("x" + h + "y");
    INFO(safe);
    CHECK(RawLeak(safe) == "");
    CHECK(safe.find('\n') == std::string::npos);
  }
  CHECK(RawLeak(gp::TerminalSafe(all)) == "");
  // The bidi controls as the bytes that encode them, like the C1 controls.
  CHECK(gp::TerminalSafe("a\xe2\x80\xae"
                         "b") == "a\\xE2\\x80\\xAEb");
  CHECK(gp::TerminalSafe("\xe2\x81\xa6"
                         "x\xe2\x81\xa9") == "\\xE2\\x81\\xA6x\\xE2\\x81\\xA9");
  for (const char* bidi : {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x80\xae",
                           "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"})
    CHECK(RawLeak(gp::TerminalSafe(bidi)) == "");
  // Their neighbours are ordinary text and stay as they are: U+2029, U+202F, U+2065, U+206A.
  CHECK(gp::TerminalSafe("\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa") ==
        "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
}

TEST_CASE("terminal: size --host prints a hostile snapshot escaped", "[cli][terminal]") {
  gp::test::TempRoot dir;
  const std::string h = HostileUtf8();
  const std::string snap = HostileSnapshot(dir.path(), "h100x8-p5.json", h);
  const std::string snap2 = HostileSnapshot(dir.path(), "l40sx4-g6e.json", h);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"size", "--model", "llama-3-70b", "--method", "lora", "--host", snap},
           {"size", "--model", "llama-3-70b", "--method", "lora", "--host", snap, "--host", snap2},
           {"size", "--model", "llama-3-70b", "--method", "lora", "--host", snap2, "--verbose"}}) {
    auto r = Gpuprep(args);
    CHECK((r.code == 0 || r.code == 1));
    CHECK(r.out.find("node\\e]52;c;aGVsbG8=\\x07") != std::string::npos);
    CheckClean(r, args.back());
  }
}

TEST_CASE("terminal: the fleet report in text and Markdown escapes every hostile string", "[cli][terminal]") {
  gp::test::TempRoot dir;
  const std::string h = HostileUtf8();
  const std::string snap = HostileSnapshot(dir.path(), "h100x8-p5.json", h);
  for (const char* format : {"text", "markdown"}) {
    auto r = Gpuprep({"fleet-report", "--format", format, snap});
    CHECK(r.code == 1);
    CHECK(r.out.find("\\xE2\\x80\\xAE") != std::string::npos);
    CheckClean(r, format);
  }
  // The renderers themselves, with ill-formed UTF-8 too (which no JSON snapshot can carry).
  gp::fleet::Host host;
  host.label = "h" + HostileUtf8() + "\x9b\xff";
  host.os = "os" + HostileUtf8() + "\xfe";
  host.layers["driver"] = "fail";
  host.worst = "fail";
  gp::fleet::Report rep;
  rep.hosts = {host};
  rep.layers = {"driver"};
  rep.failing = 1;
  gp::fleet::Group g;
  g.code = "driver.x" + HostileUtf8();
  g.layer = "driver";
  g.status = "fail";
  g.hosts = {host.label};
  g.messages = {"m" + HostileUtf8() + "\xff"};
  g.fixes = {"f" + HostileUtf8() + "\x9b"};
  rep.groups = {g};
  CHECK(RawLeak(gp::fleet::RenderText(rep)) == "");
  CHECK(RawLeak(gp::fleet::RenderMarkdown(rep)) == "");
  CHECK(RawLeak(gp::fleet::RenderHtml(rep)) == "");
}

TEST_CASE("terminal: launch --host reads a hostile snapshot without echoing it raw", "[cli][terminal]") {
  gp::test::TempRoot dir;
  const std::string snap = HostileSnapshot(dir.path(), "h100x8-p5.json", HostileUtf8());
  auto r = Gpuprep({"launch", "--host", snap, "--image", "nvcr.io/nvidia/pytorch:25.12-py3"});
  CheckClean(r, "launch");
  r = Gpuprep({"launch", "--host", snap, "--image", "nvcr.io/nvidia/pytorch:25.12-py3", "--format", "json"});
  CHECK(RawLeak(r.err) == "");
}

TEST_CASE("terminal: doctor's table escapes a hostile probed file", "[cli][terminal]") {
  gp::test::TempRoot root;
  const std::string cmd = "cp -a '" + FixturePath("hosts/healthy-h100") + "/.' '" + root.path() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ofstream(root.path() + "/etc/os-release", std::ios::trunc | std::ios::binary)
      << "PRETTY_NAME=\"Ubuntu" << HostileUtf8()
      << "\x9b\xff\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n";
  for (const char* verbose : {"", "--verbose"}) {
    std::vector<std::string> args = {"--root", root.path(), "doctor"};
    if (*verbose) args.push_back(verbose);
    auto r = Gpuprep(args);
    CHECK(r.out.find("Ubuntu\\e]52;c;aGVsbG8=\\x07") != std::string::npos);
    CheckClean(r, std::string("doctor ") + verbose);
  }
}

TEST_CASE("terminal: manifest show and validate escape a hostile stack file", "[cli][terminal]") {
  gp::test::TempRoot dir;
  // A manifest refuses control characters in its values; the bidi controls are text to YAML.
  const std::string bidi = "\xe2\x80\xae\xe2\x81\xa6";
  const std::string path = dir.path() + "/site" + bidi + ".yaml";
  std::ofstream(path, std::ios::binary)
      << "apiVersion: gpuprep/v1\nkind: Stack\n"
         "extends: ubuntu22.04-r535-cuda12.2\nmetadata:\n  name: site-r535\n"
         "  description: \"looks fine"
      << bidi << "exe.txt\"\n";
  auto r = Gpuprep({"manifest", "show", path});
  CHECK(r.code == 0);
  CHECK(r.out.find("looks fine\\xE2\\x80\\xAE") != std::string::npos);
  CheckClean(r, "manifest show");
  r = Gpuprep({"manifest", "validate", path});
  CheckClean(r, "manifest validate");
  r = Gpuprep({"--manifest", path, "--root", FixturePath("hosts/healthy-h100"), "plan"});
  CheckClean(r, "plan");
  r = Gpuprep({"--manifest", path, "--root", FixturePath("hosts/healthy-h100"), "doctor", "--verbose"});
  CheckClean(r, "doctor --manifest");
}

TEST_CASE("terminal: watch --replay escapes a hostile recording", "[cli][terminal]") {
  gp::test::TempRoot dir;
  std::string rec = ReadAll(FixturePath("watch/hung_3gpu.jsonl"));
  const std::string from = "\"NVIDIA H100 80GB HBM3\"";
  const std::string to = json("NVIDIA H100" + HostileUtf8()).dump();
  for (size_t at = rec.find(from); at != std::string::npos; at = rec.find(from, at + to.size()))
    rec.replace(at, from.size(), to);
  const std::string path = dir.path() + "/rec.jsonl";
  std::ofstream(path, std::ios::binary) << rec;
  auto r = Gpuprep({"watch", "--replay", path});
  CHECK(r.out.find("NVIDIA H100\\e]52") != std::string::npos);
  CheckClean(r, "watch --replay");
}

TEST_CASE("terminal: a snapshot that is not valid UTF-8 is one escaped error line", "[cli][terminal]") {
  gp::test::TempRoot dir;
  std::string text = ReadAll(FixturePath("snapshots/h100x8-p5.json"));
  const std::string raw = "\"train-h100-01\"";
  std::string hostile = "\"node";
  for (const std::string& h : kHostile) hostile += h;
  text.replace(text.find(raw), raw.size(), hostile + "\"");
  const std::string path = dir.path() + "/bad.json";
  std::ofstream(path, std::ios::binary) << text;
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"size", "--model", "llama-3-70b", "--host", path},
                                             {"fleet-report", path},
                                             {"launch", "--host", path}}) {
    auto r = Gpuprep(args);
    CHECK(r.code == 2);
    CheckClean(r, args.front());
  }
}

TEST_CASE("terminal: a launch that would hold a control or bidi character is refused, not printed",
          "[cli][terminal]") {
  // The command is printed to be copied and run: escaping would change it, so it is refused (exit 2) unless
  // the format has escapes of its own that keep the value (YAML's double-quoted strings).
  const std::string snap = FixturePath("snapshots/h100x2-runtime.json");
  for (const std::string& value :
       {std::string("a\xe2\x80\xae") + "b", std::string("a\xc2\x9b") + "2J", std::string("a\x1b[8m")}) {
    for (const char* format : {"docker", "compose", "k8s"}) {
      auto r = Gpuprep({"launch", "--host", snap, "--image", "nvcr.io/nvidia/pytorch:25.12-py3", "--format",
                        format, "-e", "NOTE=" + value});
      INFO(format << ": " << gp::TerminalSafe(r.err));
      // A shell command is refused; YAML may write the value in its own escapes instead (the same value).
      const bool shell = std::string(format) == "docker";
      CHECK((r.code == 2 || (!shell && r.code == 0)));
      if (r.code == 2) {
        CHECK(r.out == "");
        CHECK(r.err.find('\n') == r.err.size() - 1);
      }
      CheckClean(r, format);
    }
  }
  auto ok = Gpuprep(
      {"launch", "--host", snap, "--image", "nvcr.io/nvidia/pytorch:25.12-py3", "-e", "NOTE=caf\xc3\xa9"});
  CHECK(ok.code == 0);
  CHECK(ok.out.find("NOTE=caf\xc3\xa9") != std::string::npos);
}
