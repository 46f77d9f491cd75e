// Price lists (src/prices/, manifest/prices_doc.h): the arithmetic of a configuration's cost, look-up by
// board, catalogue name or PCI id, and hostile documents refused at the offending value's line and column.
#include "prices/prices.h"

#include <catch2/catch.hpp>

#include "util/error.h"

namespace {

const char* kDoc =
    "apiVersion: gpuprep/v1\n"                             // 1
    "kind: Prices\n"                                       // 2
    "metadata: {name: my-cloud}\n"                         // 3
    "currency: USD\n"                                      // 4
    "prices:\n"                                            // 5
    "  - {gpu: \"H100 SXM5 80GB\", per_gpu_hour: 2.49}\n"  // 6
    "  - {gpu: \"0x26b9\", per_gpu_hour: 1.10}\n";         // 7

// Each GPU the catalogue knows, by all its names: board, catalogue entry, PCI ids.
const std::vector<std::vector<std::string>> kKnown = {{"H100 SXM5 80GB", "H100 80GB HBM3", "0x2330"},
                                                      {"L40S", "0x26b9"}};

std::string ErrorOf(const std::string& text) {
  try {
    gp::prices::Load(text, "prices.yaml", kKnown);
  } catch (const gp::FileError& e) {
    return e.what();
  }
  return "";
}

std::string With(const std::string& from, const std::string& to) {
  std::string s = kDoc;
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("prices: cost per hour and per month", "[prices]") {
  const auto c = gp::prices::CostOf(8, 2.49);
  CHECK(c.per_gpu_hour == Approx(2.49));
  CHECK(c.per_hour == Approx(19.92));
  CHECK(c.per_month == Approx(19.92 * 730));  // 8760 hours a year / 12
  CHECK(gp::prices::CostOfGpuSeconds(3600 * 4, 2.5) == Approx(10.0));
}

TEST_CASE("prices: look-up by board, catalogue name or PCI id, case-insensitive", "[prices]") {
  const auto t = gp::prices::Load(kDoc, "prices.yaml", kKnown);
  CHECK(t.currency == "USD");
  CHECK(t.For({"h100 sxm5 80gb"}) == Approx(2.49));
  CHECK(t.For({"L40S", "0x26b9"}) == Approx(1.10));
  CHECK_FALSE(t.For({"A100 SXM4 80GB"}).has_value());
  const auto flat = gp::prices::Flat("3.5");
  CHECK(flat.For({"anything"}) == Approx(3.5));
}

TEST_CASE("prices: hostile documents, one error at the value", "[prices]") {
  CHECK(ErrorOf(With("H100 SXM5 80GB", "H100 SXM5 80G")) ==
        "prices.yaml:6:11: unknown GPU \"H100 SXM5 80G\" (did you mean \"H100 SXM5 80GB\"?)");
  CHECK(ErrorOf(With("2.49", "-1")).find("prices.yaml:6:") == 0);
  CHECK(ErrorOf(With("2.49", "1e3")).find("per_gpu_hour must be a price such as 2.49") != std::string::npos);
  CHECK(ErrorOf(With("2.49", ".inf")).find("prices.yaml:6:") == 0);
  CHECK(ErrorOf(With("currency: USD", "currency: usd")).find("prices.yaml:4:") == 0);
  CHECK(ErrorOf(With("\"0x26b9\"", "\"h100 sxm5 80gb\"")).find("prices.yaml:7:11: a second price") == 0);
  CHECK(ErrorOf(With("per_gpu_hour: 1.10}", "per_gpu_hour: 1.10, spot: true}")).find("prices.yaml:7:") == 0);
  CHECK(ErrorOf(std::string(kDoc) + "  - {gpu: \"L40S\x1b[2J\", per_gpu_hour: 1}\n").find("prices.yaml:8:") ==
        0);
  CHECK(ErrorOf(With("kind: Prices", "kind: Price")).find("prices.yaml:2:") == 0);
  // One GPU under two of its names (its board name and its PCI id): which price would hold is not said.
  CHECK(
      ErrorOf(std::string(kDoc) + "  - {gpu: \"0x2330\", per_gpu_hour: 3}\n") ==
      "prices.yaml:8:11: a second price for the GPU \"H100 SXM5 80GB\" of line 6 (\"0x2330\" names the same "
      "GPU); price each GPU once");
  CHECK(ErrorOf(With("\"0x26b9\"", "\"H100 80GB HBM3\""))
            .find("prices.yaml:7:11: a second price for the GPU") == 0);
  CHECK_THROWS_AS(gp::prices::Flat("0"), gp::FlagError);
  CHECK_THROWS_AS(gp::prices::Flat("nan"), gp::FlagError);
  CHECK_THROWS_AS(gp::prices::Flat("1e400"), gp::FlagError);
}
