// The two snapshot readers (src/fleet/snapshot.h) agree: wherever the fast one (simdjson On-Demand) answers,
// its Host is the reference's (nlohmann DOM); wherever the reference refuses, the fast one does not answer.
// Documents: doctor on every fixture tree, the fixture snapshots, and edits of them that probe the corners
// (duplicate keys, escapes, numbers, nesting at the limit, what is read only sometimes).
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fleet/snapshot.h"
#include "support/cli.h"
#include "util/error.h"

namespace {

using nlohmann::json;

std::string DoctorJson(const std::string& tree) {
  auto r = gp::test::Gpuprep({"doctor", "--json", "--root", std::string(GP_FIXTURES) + "/hosts/" + tree});
  REQUIRE((r.code == 0 || r.code == 1));
  return r.out;
}

std::optional<gp::fleet::Host> Checked(const std::string& text) {
  try {
    return gp::fleet::ReadSnapshotChecked(text, "x.json");
  } catch (const gp::Error&) {
    return std::nullopt;
  }
}

// What the fast reader did with `text`: "same" (answered, as the reference), "deferred" (left it to the
// reference), or what went wrong.
std::string Agreement(gp::fleet::SnapshotReader& reader, const std::string& text) {
  const auto fast = reader.ReadFast(text);
  const auto ref = Checked(text);
  if (!fast) return "deferred";
  if (!ref) return "answered where the reference refuses";
  gp::fleet::Host f = *fast;
  f.file = ref->file;
  return f == *ref ? "same" : "answered differently";
}

std::vector<std::string> Documents() {
  std::vector<std::string> docs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GP_FIXTURES) + "/hosts"))
    if (e.is_directory()) docs.push_back(DoctorJson(e.path().filename().string()));
  for (const auto& e : std::filesystem::directory_iterator(std::string(GP_FIXTURES) + "/snapshots")) {
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    docs.push_back(s.str());
  }
  return docs;
}

// The first finding that fails (the mismatch tree has some).
json& FailingFinding(json& d) {
  for (auto& l : d["layers"])
    if (l.contains("findings"))
      for (auto& f : l["findings"])
        if (f["status"] == "fail") return f;
  FAIL("no failing finding");
  throw;
}

}  // namespace

TEST_CASE("the fast snapshot reader answers every doctor document, as the reference does", "[fleet]") {
  if (!gp::fleet::SnapshotReader::Fast()) {
    WARN("built without simdjson: every snapshot goes to the reference reader");
    return;
  }
  gp::fleet::SnapshotReader reader;
  const auto docs = Documents();
  REQUIRE(docs.size() >= 10);
  for (const auto& d : docs) {
    CHECK(Agreement(reader, d) == "same");
    CHECK(Agreement(reader, json::parse(d).dump()) == "same");  // compact
  }
  // Read() takes the fast answer and names the file.
  CHECK(reader.Read(docs[0], "a/b.json").file == "a/b.json");
}

TEST_CASE("the fast snapshot reader defers what it is not sure of, and never answers a refused one", "[fleet]") {
  if (!gp::fleet::SnapshotReader::Fast()) return;  // nothing to compare (see above)
  gp::fleet::SnapshotReader reader;
  const std::string base = DoctorJson("mismatch");
  const json doc = json::parse(base);
  auto edit = [&](const std::function<void(json&)>& f) {
    json d = doc;
    f(d);
    return d.dump(1);
  };
  const std::string s64 = std::string(64, 'a');
  struct Case {
    const char* what;
    std::string text;
    const char* expect;  // "same", "deferred"
  };
  const std::vector<Case> cases = {
      {"hostname null", edit([](json& d) { d["host"]["hostname"] = nullptr; }), "same"},
      {"hostname absent", edit([](json& d) { d["host"].erase("hostname"); }), "same"},
      {"hostname a number", edit([](json& d) { d["host"]["hostname"] = 7; }), "deferred"},
      {"os absent", edit([](json& d) { d["host"].erase("os"); }), "deferred"},
      {"os.version_id null", edit([](json& d) { d["host"]["os"]["version_id"] = nullptr; }), "deferred"},
      {"gpus an object", edit([](json& d) { d["host"]["gpus"] = json::object(); }), "deferred"},
      {"gpu uuid null", edit([](json& d) { d["host"]["gpus"][0]["uuid"] = nullptr; }), "same"},
      {"gpu name absent", edit([](json& d) { d["host"]["gpus"][0].erase("name"); }), "deferred"},
      {"manifest null", edit([](json& d) { d["manifest"] = nullptr; }), "same"},
      {"manifest a list", edit([](json& d) { d["manifest"] = json::array(); }), "deferred"},
      {"an unknown layer", edit([](json& d) { d["layers"][0]["name"] = "gpus"; }), "deferred"},
      {"a bad status", edit([](json& d) { d["layers"][0]["status"] = "bad"; }), "deferred"},
      {"findings null", edit([](json& d) { d["layers"][2]["findings"] = nullptr; }), "same"},
      {"findings {}", edit([](json& d) { d["layers"][2]["findings"] = json::object(); }), "same"},
      {"findings []", edit([](json& d) { d["layers"][2]["findings"] = json::array(); }), "same"},
      {"findings {a:1}", edit([](json& d) { d["layers"][2]["findings"] = {{"a", 1}}; }), "deferred"},
      {"findings a string", edit([](json& d) { d["layers"][2]["findings"] = "x"; }), "deferred"},
      {"uncoded layer without detail",
       edit([](json& d) {
         for (auto& l : d["layers"])
           if (l["status"] == "fail") l.erase("findings"), l.erase("detail");
       }),
       "deferred"},
      {"uncoded layers",
       edit([](json& d) {
         for (auto& l : d["layers"]) l.erase("findings");
       }),
       "same"},
      {"an ok layer's long detail (not read by the reference; the fast reader defers)",
       edit([](json& d) {
         for (auto& l : d["layers"])
           if (l["status"] == "ok") l["detail"] = std::string(5000, 'x');
       }),
       "deferred"},
      {"a long message", edit([](json& d) { d["layers"][2]["findings"][0]["message"] = std::string(5000, 'x'); }),
       "deferred"},
      {"a finding code null", edit([](json& d) { d["layers"][2]["findings"][0]["code"] = nullptr; }), "same"},
      {"a bad finding code", edit([](json& d) { FailingFinding(d)["code"] = "Bad Code"; }), "deferred"},
      {"a bad code on an ok finding (not read)",
       edit([](json& d) {
         json& f = FailingFinding(d);
         f["status"] = "ok";
         f["code"] = "Bad Code";
       }),
       "same"},
      {"unknown keys anywhere",
       edit([](json& d) {
         d["extra"] = {{"n", {1, 2.5, -3, true, nullptr, "s"}}};
         d["host"]["gpus"][0]["extra"] = json::array();
         d["layers"][0]["extra"] = {{"k", "v"}};
       }),
       "same"},
      {"a big integer elsewhere", "{\"big\": 18446744073709551616, " + base.substr(1), "deferred"},
      {"a number no double holds", "{\"host\": {\"cpus\": 1e999}, \"layers\": []}", "deferred"},
      {"a byte-order mark", "\xEF\xBB\xBF" + base, "deferred"},
      {"trailing text", base + " x", "deferred"},
      {"a key given twice (read)", "{\"host\": {}, " + base.substr(1), "deferred"},
      {"a key given twice (not read)", "{\"extra\": 1, \"extra\": 2, " + base.substr(1), "same"},
      {"an escaped key", std::string(base).replace(base.find("\"host\""), 6, "\"ho\\u0073t\""), "same"},
      {"invalid UTF-8 in a string", std::string(base).replace(base.find("\"ubuntu\""), 8, "\"ub\xFFntu\""), "deferred"},
      {"a lone surrogate", "{\"x\": \"\\ud800\", " + base.substr(1), "deferred"},
      {"a raw tab in a string", "{\"x\": \"a\tb\", " + base.substr(1), "deferred"},
      {"32 levels", "{\"x\": " + std::string(31, '[') + std::string(31, ']') + ", " + base.substr(1), "same"},
      {"33 levels", "{\"x\": " + std::string(32, '[') + std::string(32, ']') + ", " + base.substr(1), "deferred"},
      {"not an object", "[]", "deferred"},
      {"empty", "", "deferred"},
      {"a 64-hex machine id", edit([&](json& d) { d["host"]["machine_id"] = s64; }), "same"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(Agreement(reader, c.text) == c.expect);
  }
  // Nesting beyond the limit inside a value the fast reader keeps (an ok layer's detail): refused by the
  // reference, so not answered.
  std::string deep = base;
  const size_t at = deep.find("\"detail\"");
  REQUIRE(at != std::string::npos);
  const size_t value = deep.find(':', at) + 1;
  const size_t end = deep.find_first_of(",}", deep.find('"', value + 1) + 1);
  deep.replace(value, end - value, " " + std::string(30, '[') + std::string(30, ']'));
  CHECK(Agreement(reader, deep) == "deferred");
}
