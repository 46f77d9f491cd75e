// The two snapshot readers (src/fleet/snapshot.h) agree: wherever the fast one (util/json_scan.h) answers,
// its Host is the reference's (nlohmann DOM); wherever it refuses, the reference refuses too; and
// ParseSnapshot, which runs both, gives the reference's Host or its error, word for word. Documents: doctor
// on every fixture tree, the fixture snapshots, edits of them that probe the corners (duplicate keys,
// escapes, numbers, nesting at the limit, what is read only sometimes), and seeded random mutations of them.
#include "fleet/snapshot.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli.h"
#include "util/error.h"

namespace {

using gp::fleet::FastOutcome;
using nlohmann::json;

std::string DoctorSnapshot(const std::string& tree) {
  auto r = gp::test::Gpuprep({"doctor", "--json", "--root", std::string(GP_FIXTURES) + "/hosts/" + tree});
  REQUIRE((r.code == 0 || r.code == 1));
  return r.out;
}

// The reference's Host, or its error message.
struct Reference {
  std::optional<gp::fleet::Host> host;
  std::string error;
};
Reference Checked(const std::string& text) {
  try {
    return {gp::fleet::ReadSnapshotChecked(text, "x.json"), ""};
  } catch (const gp::Error& e) {
    return {std::nullopt, e.what()};
  }
}

// What the fast reader did with `text`: "same" (answered, as the reference), "deferred" (left it to the
// reference), "refused" (as the reference does), or what went wrong. ParseSnapshot is checked on the way:
// the reference's Host, or the same error.
std::string Agreement(const std::string& text) {
  FastOutcome outcome = FastOutcome::kAnswered;
  const auto fast = gp::fleet::ReadSnapshotFast(text, &outcome);
  const Reference ref = Checked(text);
  try {
    const gp::fleet::Host h = gp::fleet::ParseSnapshot(text, "x.json");
    if (!ref.host || !(h == *ref.host)) return "ParseSnapshot differs from the reference";
  } catch (const gp::Error& e) {
    if (ref.host || e.what() != ref.error) return "ParseSnapshot's error differs from the reference's";
  }
  if (fast.has_value() != (outcome == FastOutcome::kAnswered)) return "outcome and answer disagree";
  if (outcome == FastOutcome::kRefused) return ref.host ? "refused where the reference accepts" : "refused";
  if (!fast) return "deferred";
  if (!ref.host) return "answered where the reference refuses";
  gp::fleet::Host f = *fast;
  f.file = ref.host->file;
  return f == *ref.host ? "same" : "answered differently";
}

std::vector<std::string> Documents() {
  std::vector<std::string> docs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GP_FIXTURES) + "/hosts"))
    if (e.is_directory()) docs.push_back(DoctorSnapshot(e.path().filename().string()));
  for (const auto& e : std::filesystem::directory_iterator(std::string(GP_FIXTURES) + "/snapshots")) {
    std::ifstream in(e.path());
    std::stringstream s;
    s << in.rdbuf();
    docs.push_back(s.str());
  }
  return docs;
}

// `text` with its first `what` replaced by `with`.
std::string Put(std::string text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  REQUIRE(at != std::string::npos);
  return text.replace(at, what.size(), with);
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
  const auto docs = Documents();
  REQUIRE(docs.size() >= 10);
  for (const auto& d : docs) {
    CHECK(Agreement(d) == "same");
    CHECK(Agreement(json::parse(d).dump()) == "same");               // compact
    CHECK(Agreement(json::parse(d).dump(4)) == "same");              // wider indentation
    CHECK(Agreement(json::parse(d).dump(-1, ' ', true)) == "same");  // non-ASCII escaped
  }
  // ParseSnapshot takes the fast answer and names the file.
  CHECK(gp::fleet::ParseSnapshot(docs[0], "a/b.json").file == "a/b.json");
}

TEST_CASE("the fast snapshot reader defers what it is not sure of, and never answers a refused one",
          "[fleet]") {
  const std::string base = DoctorSnapshot("mismatch");
  const json doc = json::parse(base);
  auto edit = [&](const std::function<void(json&)>& f) {
    json d = doc;
    f(d);
    return d.dump(1);
  };
  const std::string s64 = std::string(64, 'a');
  const std::string marked = edit([](json& d) { d["host"]["hostname"] = "@"; });  // Put() writes over "@"
  std::string slashes;
  for (int i = 0; i < 4096; ++i) slashes += "\\/";
  struct Case {
    const char* what;
    std::string text;
    const char* expect;  // "same", "deferred", "refused"
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
      {"findings {a:1}", edit([](json& d) {
         d["layers"][2]["findings"] = {{"a", 1}};
       }),
       "deferred"},
      {"findings a string", edit([](json& d) { d["layers"][2]["findings"] = "x"; }), "deferred"},
      {"uncoded layer without detail", edit([](json& d) {
         for (auto& l : d["layers"])
           if (l["status"] == "fail") l.erase("findings"), l.erase("detail");
       }),
       "deferred"},
      {"uncoded layers", edit([](json& d) {
         for (auto& l : d["layers"]) l.erase("findings");
       }),
       "same"},
      {"an ok layer's long detail (not read by the reference, nor decoded by the fast reader)",
       edit([](json& d) {
         for (auto& l : d["layers"])
           if (l["status"] == "ok") l["detail"] = std::string(5000, 'x');
       }),
       "same"},
      {"a long message", edit([](json& d) { FailingFinding(d)["message"] = std::string(5000, 'x'); }),
       "deferred"},
      {"a finding code null", edit([](json& d) { FailingFinding(d)["code"] = nullptr; }), "same"},
      {"a bad finding code", edit([](json& d) { FailingFinding(d)["code"] = "Bad Code"; }), "deferred"},
      {"a bad code on an ok finding (not read)", edit([](json& d) {
         json& f = FailingFinding(d);
         f["status"] = "ok";
         f["code"] = "Bad Code";
       }),
       "same"},
      {"unknown keys anywhere", edit([](json& d) {
         d["extra"] = {{"n", {1, 2.5, -3, true, nullptr, "s"}}};
         d["host"]["gpus"][0]["extra"] = json::array();
         d["layers"][0]["extra"] = {{"k", "v"}};
       }),
       "same"},
      {"a big integer elsewhere", "{\"big\": 18446744073709551616, " + base.substr(1), "same"},
      {"a long integer elsewhere", "{\"big\": " + std::string(300, '7') + ", " + base.substr(1), "same"},
      {"a number no double holds", "{\"host\": {\"cpus\": 1e999}, \"layers\": []}", "deferred"},
      {"a byte-order mark", "\xEF\xBB\xBF" + base, "same"},
      {"trailing text", base + " x", "refused"},
      {"a NUL byte, then text (nlohmann reads no further)", base + std::string("\0 x", 3), "deferred"},
      {"a key given twice (read)", "{\"host\": {}, " + base.substr(1), "deferred"},
      {"a key given twice (not read)", "{\"extra\": 1, \"extra\": 2, " + base.substr(1), "same"},
      {"an escaped key", std::string(base).replace(base.find("\"host\""), 6, "\"ho\\u0073t\""), "same"},
      {"invalid UTF-8 in a string", std::string(base).replace(base.find("\"ubuntu\""), 8, "\"ub\xFFntu\""),
       "refused"},
      {"a lone surrogate", "{\"x\": \"\\ud800\", " + base.substr(1), "refused"},
      {"a raw tab in a string", "{\"x\": \"a\tb\", " + base.substr(1), "refused"},
      {"32 levels", "{\"x\": " + std::string(31, '[') + std::string(31, ']') + ", " + base.substr(1), "same"},
      {"33 levels", "{\"x\": " + std::string(32, '[') + std::string(32, ']') + ", " + base.substr(1),
       "refused"},
      {"not an object", "[]", "deferred"},
      {"empty", "", "refused"},
      {"a 64-hex machine id", edit([&](json& d) { d["host"]["machine_id"] = s64; }), "same"},
      {"a hostname of 4096 bytes", edit([](json& d) { d["host"]["hostname"] = std::string(4096, 'h'); }),
       "same"},
      {"a hostname of 4097 bytes", edit([](json& d) { d["host"]["hostname"] = std::string(4097, 'h'); }),
       "deferred"},
      {"a hostname of 4096 bytes written as 8192", Put(marked, "\"@\"", "\"" + slashes + "\""), "same"},
      {"escapes in what is read", edit([](json& d) {
         d["host"]["hostname"] = "n\u00f6de-\xF0\x9F\x98\x80";
         FailingFinding(d)["message"] = "a \"quoted\"\n\tmessage \\ \u0001";
       }),
       "same"},
      {"escaped surrogates in what is read",
       std::string(base).replace(base.find("\"ubuntu\""), 8, "\"ub\\ud83d\\ude00ntu\\u0000\""), "same"},
      {"an escaped layer name", std::string(base).replace(base.find("\"driver\""), 8, "\"dri\\u0076er\""),
       "same"},
      {"a key given twice under host (not read)", Put(marked, "\"@\"", "\"@\", \"kernel\": 1, \"kernel\": 2"),
       "same"},
      {"a hostname given twice", Put(base, "\"hostname\"", "\"hostname\": \"a\", \"hostname\""), "deferred"},
      {"a number at a double's limit", "{\"n\": 1e308, " + base.substr(1), "deferred"},
      {"a number just below it", "{\"n\": 9.9e306, " + base.substr(1), "same"},
      {"over the size limit", "{\"pad\": \"" + std::string(16u << 20, 'p') + "\", " + base.substr(1),
       "refused"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(Agreement(c.text) == c.expect);
  }
  // Nesting beyond the limit inside a value the fast reader keeps (an ok layer's detail): refused by both.
  std::string deep = base;
  const size_t at = deep.find("\"detail\"");
  REQUIRE(at != std::string::npos);
  const size_t value = deep.find(':', at) + 1;
  const size_t end = deep.find_first_of(",}", deep.find('"', value + 1) + 1);
  deep.replace(value, end - value, " " + std::string(30, '[') + std::string(30, ']'));
  CHECK(Agreement(deep) == "refused");
}

// Seeded random edits of real documents: bytes replaced, inserted, deleted and slices repeated, with the
// bytes that matter most to a JSON reader. Whatever the fast reader says must hold (Agreement above), and
// each of its three answers must come up, so the property is exercised rather than vacuous.
TEST_CASE("the fast snapshot reader agrees with the reference on mutated documents", "[fleet]") {
  const std::vector<std::string> bases = {DoctorSnapshot("mismatch"),
                                          json::parse(DoctorSnapshot("healthy-h100")).dump()};
  const std::string palette =
      std::string("\"\\{}[],:0-+e.Eu \t\nntf1") + '\0' + "\x1F\x7F\x80\xBF\xC3\xED\xF0\xF4\xFF";
  std::mt19937 rng(20261201);  // fixed: the same cases every run
  std::map<std::string, int> seen;
  for (int i = 0; i < 600; ++i) {
    std::string t = bases[i % bases.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const size_t at = rng() % t.size();
      const char c = rng() % 4 == 0 ? static_cast<char>(rng() % 256) : palette[rng() % palette.size()];
      switch (rng() % 4) {
        case 0:
          t[at] = c;
          break;
        case 1:
          t.insert(at, 1, c);
          break;
        case 2:
          t.erase(at, 1 + rng() % 8);
          break;
        default:
          t.insert(at, t.substr(rng() % t.size(), 1 + rng() % 64));
      }
    }
    const std::string a = Agreement(t);
    ++seen[a];
    if (a != "same" && a != "deferred" && a != "refused") {
      INFO(json(t).dump(-1, ' ', false, json::error_handler_t::replace));
      CHECK(a == "same, deferred or refused");
    }
  }
  INFO("same " << seen["same"] << ", deferred " << seen["deferred"] << ", refused " << seen["refused"]);
  CHECK(seen["same"] > 0);
  CHECK(seen["deferred"] > 0);
  CHECK(seen["refused"] > 0);
}
