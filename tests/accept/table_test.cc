// The expectation table: rows parse, derived values follow their rule, a figure without a source (or whose
// excerpt does not hold it) is refused, and the shipped table passes its own excerpt check.
#include "accept/table.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>

#include "accept/catalogue_links.h"
#include "manifest/loader.h"
#include "util/error.h"

namespace {

const std::string kHead =
    "# device\tgpus\ttopology\tquantity\tlevel\tvalue\tunit\tsize\tkind\tsource\texcerpt\n";
const std::string kTypical =
    "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\t794.5\tTFLOP/s\t-\tquoted\towner/"
    "repo@abc1234:README.md:354\tx.txt\n";
const std::string kFloor =
    "0x2330\t8\tnvswitch\tmatmul_bf16\tfloor\t-\tTFLOP/s\t-\tderived\t0.9 x typical\t-\n";

std::string TableErrorOf(const std::string& text) {
  try {
    gp::accept::LoadTable(text, "t.tsv");
  } catch (const gp::Error& e) {
    return e.what();
  }
  return "";
}

std::string SlurpFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("accept table: quoted and derived values", "[accept]") {
  auto t = gp::accept::LoadTable(kHead + kTypical + kFloor, "t.tsv");
  const auto* f = t.Find("0x2330", 8, "nvswitch", "matmul_bf16", "floor");
  REQUIRE(f != nullptr);
  CHECK(f->value == Approx(715.05));
  CHECK(f->kind == "derived");
  CHECK(t.Find("0x2330", 4, "nvswitch", "matmul_bf16", "floor") == nullptr);
  CHECK(t.HasBoard("0x2330", 8, "nvswitch"));
  CHECK_FALSE(t.HasBoard("0x20b2", 8, "nvswitch"));
}

TEST_CASE("accept table: bad rows are refused with their line", "[accept]") {
  // A figure with no source is refused: quoted needs repo@commit:path:line or a URL, and an excerpt.
  CHECK(TableErrorOf(kHead + "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\t794.5\tTFLOP/s\t-\tquoted\t-\t-\n")
            .find("t.tsv:2:") == 0);
  CHECK(TableErrorOf(kHead + "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\t794.5\tTFLOP/s\t-\tguessed\tx\t-\n")
            .find("kind") != std::string::npos);
  // A rule naming a value the row does not have.
  CHECK(TableErrorOf(kHead + kFloor).find("t.tsv:2:") == 0);
  CHECK(TableErrorOf(kHead + kTypical + kTypical).find("duplicate") != std::string::npos);
  CHECK(TableErrorOf(kHead +
                     "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\tNaN\tTFLOP/s\t-\tquoted\to/r@a:b:1\tx.txt\n")
            .find("t.tsv:2:") == 0);
  CHECK(TableErrorOf(kHead + "0x2330\t8\tnvswitch\tfft\ttypical\t1\tTFLOP/s\t-\tquoted\to/r@a:b:1\tx.txt\n")
            .find("quantity") != std::string::npos);
  CHECK(TableErrorOf(kHead + "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\t794.5\n").find("11 columns") !=
        std::string::npos);
}

TEST_CASE("accept table: a quoted figure must stand on its quoted line", "[accept]") {
  auto t = gp::accept::LoadTable(kHead + kTypical + kFloor, "t.tsv");
  std::map<std::string, std::string> files{
      {"x.txt", "# owner/repo@abc1234:README.md\n354: | NVIDIA H100 SXM  |  794.5 |    989 |\n"}};
  auto read = [&](const std::string& n) -> std::optional<std::string> {
    auto it = files.find(n);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  CHECK(gp::accept::CheckExcerpts(t, read).empty());
  files["x.txt"] = "# owner/repo@abc1234:README.md\n354: | NVIDIA H100 SXM  |  7945 |    989 |\n";
  CHECK(gp::accept::CheckExcerpts(t, read).size() == 1);
  files["x.txt"] = "# owner/repo@abc1234:README.md\n353: | NVIDIA H100 SXM  |  794.5 |    989 |\n";
  CHECK(gp::accept::CheckExcerpts(t, read).size() == 1);
  files["x.txt"] = "# other/repo@abc1234:README.md\n354: | NVIDIA H100 SXM  |  794.5 |    989 |\n";
  CHECK(gp::accept::CheckExcerpts(t, read).size() == 1);
  files["x.txt"] = "# owner/repo@abc1234:README.md\n354: 794.5\n" + std::string(1100, '.');
  CHECK(gp::accept::CheckExcerpts(t, read).size() == 1);
  files.clear();
  CHECK(gp::accept::CheckExcerpts(t, read).size() == 1);
}

TEST_CASE("accept table: the shipped table and its excerpts", "[accept]") {
  const std::string dir = std::string(GP_SOURCE_DIR) + "/manifests/accept/";
  auto t = gp::accept::LoadTable(SlurpFile(dir + "expectations.tsv"), "expectations.tsv");
  auto read = [&](const std::string& n) -> std::optional<std::string> {
    std::ifstream in(dir + "excerpts/" + n);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  CHECK(gp::accept::CheckExcerpts(t, read) == std::vector<std::string>{});
  CHECK(gp::accept::EmbeddedTable().values.size() == t.values.size());
  // Every board row has a typical value or a floor for its compute and memory, and its peaks.
  for (const char* dev : {"0x2330", "0x20b2"}) {
    CHECK(t.Find(dev, 8, "nvswitch", "matmul_bf16", "typical") != nullptr);
    CHECK(t.Find(dev, 8, "nvswitch", "matmul_bf16", "peak") != nullptr);
    CHECK(t.Find(dev, 8, "nvswitch", "hbm_copy", "peak") != nullptr);
    CHECK(t.Find(dev, 8, "nvswitch", "all_reduce", "floor") != nullptr);
  }
}

TEST_CASE("accept table: NVLink links per GPU come from the catalogue, each with its source", "[accept]") {
  const auto links = gp::accept::CatalogueNvlinkLinks(gp::manifest::EmbeddedCompat());
  const std::map<std::string, double> want{{"0x2330", 18}, {"0x2335", 18}, {"0x20b2", 12},
                                           {"0x20b0", 12}, {"0x2901", 18}, {"0x2941", 18}};
  for (const auto& [dev, n] : want) {
    INFO(dev);
    REQUIRE(links.count(dev) == 1);
    CHECK(links.at(dev).value == n);
    CHECK(links.at(dev).unit == "links");
    CHECK(links.at(dev).kind == "quoted");
    CHECK(links.at(dev).source.find("ml-engineering@744d01e") != std::string::npos);
  }
  // PCIe cards have no sourced link count: not judged.
  for (const char* dev : {"0x26b9", "0x2321", "0x20b5"}) CHECK(links.count(dev) == 0);
  // The table no longer carries them: one source for one number.
  CHECK_THROWS_WITH(
      gp::accept::LoadTable("0x2330\t*\t*\tnvlink_links\tpeak\t18\tlinks\t-\tquoted\to/r@c:f:7\tx.txt\n",
                            "t.tsv"),
      Catch::Contains("t.tsv:1:4:"));
}
