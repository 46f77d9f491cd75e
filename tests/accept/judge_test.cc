// The verdict engine: every rule of one measurement (peak, floor, outlier, typical), unknown boards, the
// links, the inventory against an offer, the overall verdict and its exit code.
#include "accept/judge.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "accept/offer.h"
#include "util/error.h"

using gp::accept::Status;

namespace {

const std::string kTable =
    "0x2330\t8\tnvswitch\tmatmul_bf16\ttypical\t794.5\tTFLOP/s\t-\tquoted\to/r@c:f:1\tx.txt\n"
    "0x2330\t8\tnvswitch\tmatmul_bf16\tfloor\t-\tTFLOP/s\t-\tderived\t0.9 x typical\t-\n"
    "0x2330\t*\t*\tmatmul_bf16\tpeak\t989\tTFLOP/s\t-\tquoted\to/r@c:f:2\tx.txt\n"
    "0x2330\t8\tnvswitch\th2d_gen5\tfloor\t48\tGB/s\t-\tquoted\to/r@c:f:3\tx.txt\n"
    "*\t*\t*\th2d_gen5\tpeak\t63\tGB/s\t-\tquoted\to/r@c:f:4\tx.txt\n"
    "*\t*\t*\th2d_gen4\tpeak\t31\tGB/s\t-\tquoted\to/r@c:f:5\tx.txt\n"
    "0x2330\t8\tnvswitch\tall_reduce\tfloor\t460.0\tGB/s\t17179869184\tquoted\to/r@c:f:6\tx.txt\n";

// The catalogue's links per GPU (tools/data/gpu-boards.tsv) for 0x2330 only.
std::map<std::string, gp::accept::Value> Links() {
  gp::accept::Value v;
  v.device = "0x2330";
  v.quantity = "nvlink_links";
  v.level = "peak";
  v.value = 18;
  v.text = "18";
  v.unit = "links";
  v.kind = "quoted";
  v.source = "o/r@c:f:7";
  return {{"0x2330", v}};
}

gp::accept::Recording Server(const std::string& device = "0x2330", int n = 8) {
  gp::accept::Recording r;
  r.run.topology = "nvswitch";
  r.run.cpus = 192;
  r.run.ram_bytes = 2'000'000'000'000ULL;
  r.run.nvme_bytes.assign(8, 3'840'000'000'000ULL);
  for (int i = 0; i < n; ++i) {
    gp::accept::GpuInfo g;
    g.index = i;
    g.pci_device_id = device;
    g.memory_total_mib = 81559;
    g.pcie_max_gen = 5;
    g.pcie_max_width = 16;
    g.nvlink_links_up = 18;
    g.fabric_complete = true;
    for (int j = 0; j < n; ++j)
      if (j != i) g.nvlink_p2p_peers.push_back(j);
    r.gpus.push_back(g);
    gp::accept::Phase p;
    p.phase = "matmul_bf16";
    p.unit = "tflops";
    p.gpu = i;
    p.value = 790;
    p.pcie_gen_current = 5;
    p.pcie_width_current = 16;
    r.phases.push_back(p);
  }
  return r;
}

const gp::accept::Check* Find(const gp::accept::Result& r, const std::string& name, int gpu) {
  for (const auto& c : r.checks)
    if (c.name == name && c.gpu == gpu) return &c;
  return nullptr;
}

gp::accept::Result JudgeIt(const gp::accept::Recording& rec, gp::accept::Options o = {}) {
  if (o.nvlink_links.empty()) o.nvlink_links = Links();
  return gp::accept::Judge(rec, gp::accept::LoadTable(kTable, "t.tsv"), o);
}

}  // namespace

TEST_CASE("accept judge: one value against its levels", "[accept]") {
  auto t = gp::accept::LoadTable(kTable, "t.tsv");
  const auto* typ = t.Find("0x2330", 8, "nvswitch", "matmul_bf16", "typical");
  const auto* flo = t.Find("0x2330", 8, "nvswitch", "matmul_bf16", "floor");
  const auto* peak = t.Find("0x2330", 8, "nvswitch", "matmul_bf16", "peak");
  std::string why;
  CHECK(gp::accept::JudgeValue(800, typ, flo, peak, std::nullopt, 10, &why) == Status::kPass);
  CHECK(gp::accept::JudgeValue(780, typ, flo, peak, std::nullopt, 10, &why) == Status::kWarn);
  CHECK(gp::accept::JudgeValue(700, typ, flo, peak, std::nullopt, 10, &why) == Status::kFail);
  CHECK(why.find("floor") != std::string::npos);
  // Above the physical peak: a timing error, never a pass.
  CHECK(gp::accept::JudgeValue(9000, typ, flo, peak, std::nullopt, 10, &why) == Status::kInvalid);
  CHECK(why.find("peak") != std::string::npos);
  // No typical and no floor: no expectation, even with a peak.
  CHECK(gp::accept::JudgeValue(500, nullptr, nullptr, peak, std::nullopt, 10, &why) ==
        Status::kNoExpectation);
  CHECK(gp::accept::JudgeValue(5000, nullptr, nullptr, peak, std::nullopt, 10, &why) == Status::kInvalid);
  // The outlier rule: more than 10% below the median of its peers fails even above the floor.
  CHECK(gp::accept::JudgeValue(800, typ, flo, peak, 880.0, 10, &why) == Status::kPass);
  CHECK(gp::accept::JudgeValue(800, typ, flo, peak, 880.0, 5, &why) == Status::kFail);
  CHECK(why.find("median") != std::string::npos);
}

TEST_CASE("accept judge: a healthy server's checks pass; the verdict and exit code follow the checks",
          "[accept]") {
  auto rec = Server();
  auto r = JudgeIt(rec);
  CHECK(Find(r, "matmul_bf16", 3)->status == Status::kWarn);  // 790 < 794.5
  CHECK(Find(r, "pcie", 0)->status == Status::kPass);
  CHECK(Find(r, "nvlink", 0)->status == Status::kPass);
  CHECK(Find(r, "fabric", -1)->status == Status::kPass);
  CHECK(r.verdict == "incomplete");  // h2d and all_reduce not measured
  CHECK(gp::accept::ExitCodeFor(r, false) == 0);
  CHECK(gp::accept::ExitCodeFor(r, true) == 1);
}

TEST_CASE("accept judge: outliers, links and the fabric", "[accept]") {
  auto rec = Server();
  rec.phases[3].value = 720;  // above the floor (715.05), 8.9% below its peers' median: warn at 10%...
  CHECK(Find(JudgeIt(rec), "matmul_bf16", 3)->status == Status::kWarn);
  gp::accept::Options o;
  o.outlier_pct = 5;  // ...and an outlier at 5%
  auto r = JudgeIt(rec, o);
  CHECK(Find(r, "matmul_bf16", 3)->status == Status::kFail);
  CHECK(r.verdict == "fail");
  CHECK(gp::accept::ExitCodeFor(r, false) == 1);

  rec = Server();
  rec.phases[2].pcie_gen_current = 4;
  rec.phases[2].pcie_width_current = 8;
  r = JudgeIt(rec);
  CHECK(Find(r, "pcie", 2)->status == Status::kFail);
  CHECK(Find(r, "pcie", 2)->found == "Gen4 x8");
  CHECK(Find(r, "pcie", 2)->expected == "Gen5 x16");
  // An upstream port slower than the board sets the expectation.
  rec = Server();
  rec.gpus[2].upstream_max_gen = 4;
  rec.phases[2].pcie_gen_current = 4;
  CHECK(Find(JudgeIt(rec), "pcie", 2)->status == Status::kPass);
  // An idle link is never judged.
  rec = Server();
  rec.phases[1].pcie_gen_current.reset();
  CHECK(Find(JudgeIt(rec), "pcie", 1)->status == Status::kSkipped);

  rec = Server();
  rec.gpus[5].nvlink_links_up = 17;
  rec.gpus[5].fabric_complete = false;
  rec.gpus[5].nvlink_p2p_peers = {0, 1, 2, 3, 4, 6};
  r = JudgeIt(rec);
  CHECK(Find(r, "nvlink", 5)->status == Status::kFail);
  CHECK(Find(r, "fabric", -1)->status == Status::kFail);
  CHECK(Find(r, "fabric", -1)->reason.find("5-7") != std::string::npos);
}

TEST_CASE("accept judge: a board without a row is measured, never passed", "[accept]") {
  auto rec = Server("0x2335");
  auto r = JudgeIt(rec);
  CHECK(Find(r, "matmul_bf16", 0)->status == Status::kNoExpectation);
  CHECK(Find(r, "nvlink", 0)->status == Status::kSkipped);  // links: not judged
  CHECK(Find(r, "nvlink", 0)->reason.find("links: not judged") == 0);
  // The links come from the catalogue, and only from it: without its value, 0x2330 is not judged either.
  gp::accept::Options none;
  none.nvlink_links = {{"0x9999", Links().begin()->second}};
  const auto judged = JudgeIt(Server(), none);  // kept: Find points into it
  const auto* unsourced = Find(judged, "nvlink", 0);
  CHECK(unsourced->status == Status::kSkipped);
  CHECK_FALSE(unsourced->peak);
  CHECK(r.verdict == "incomplete");
  CHECK(gp::accept::ExitCodeFor(r, false) == 0);
  CHECK(gp::accept::ExitCodeFor(r, true) == 1);
  // All-reduce below a floor its source measured at a larger message: inconclusive (bus bandwidth grows
  // with the message), so skipped with both sizes; at or above it, the floor holds at any size.
  rec = Server();
  gp::accept::Phase ar;
  ar.phase = "all_reduce";
  ar.unit = "busbw_gb_per_s";
  ar.value = 450;
  ar.bytes = 1u << 30;
  rec.phases.push_back(ar);
  r = JudgeIt(rec);
  CHECK(Find(r, "all_reduce", -1)->status == Status::kSkipped);
  CHECK(Find(r, "all_reduce", -1)->reason.find("17179869184") != std::string::npos);
  rec.phases.back().value = 470;
  CHECK(Find(JudgeIt(rec), "all_reduce", -1)->status == Status::kPass);
  rec.phases.back().value = 450;
  rec.phases.back().bytes = 17179869184ULL;
  CHECK(Find(JudgeIt(rec), "all_reduce", -1)->status == Status::kFail);
}

TEST_CASE("accept judge: the inventory against the offer", "[accept]") {
  std::vector<gp::accept::KnownBoard> boards{{"H100 SXM5 80GB", {"H100 80GB HBM3"}, {"0x2330"}, 81559}};
  auto offer = gp::accept::ParseOfferSpec(R"(8x"H100 SXM5 80GB",cpus=192,ram=2TB,nvme=8x3.84TB)", boards);
  CHECK(offer.gpus == 8);
  CHECK(offer.pci_ids == std::vector<std::string>{"0x2330"});
  CHECK(offer.ram_bytes == 2'000'000'000'000ULL);
  CHECK(offer.nvme_count == 8);
  CHECK(gp::accept::ParseOfferSpec("8x0x2330,ram=1.5TiB", boards).ram_bytes == 1649267441664ULL);
  CHECK_THROWS_WITH(gp::accept::ParseOfferSpec("8xB300", boards), Catch::Contains("--expect"));
  CHECK_THROWS_WITH(gp::accept::ParseOfferSpec("8x0x2330,ram=lots", boards), Catch::Contains("ram"));
  CHECK_THROWS_WITH(gp::accept::ParseOfferSpec("8x0x2330,disks=2", boards), Catch::Contains("disks"));

  gp::accept::Options o;
  o.offer = offer;
  auto rec = Server();
  auto r = JudgeIt(rec, o);
  for (const char* n : {"gpu count", "board", "gpu memory", "cpus", "ram", "nvme"})
    CHECK(Find(r, n, -1)->status == Status::kPass);
  rec.gpus.pop_back();
  rec.phases.pop_back();
  rec.run.ram_bytes = 1'800'000'000'000ULL;      // 90% of 2 TB: below 0.95
  rec.run.nvme_bytes[0] = 3'500'000'000'000ULL;  // one of eight short
  rec.gpus[0].memory_total_mib = 40000;
  r = JudgeIt(rec, o);
  for (const char* n : {"gpu count", "gpu memory", "ram", "nvme"})
    CHECK(Find(r, n, -1)->status == Status::kFail);
  CHECK(Find(r, "cpus", -1)->status == Status::kPass);
  // Without an offer the inventory is not applicable.
  CHECK(Find(JudgeIt(Server()), "inventory", -1)->status == Status::kNotApplicable);
}

TEST_CASE("accept judge: the offer as a kind: Offer document", "[accept]") {
  std::vector<gp::accept::KnownBoard> boards{{"H100 SXM5 80GB", {"H100 80GB HBM3"}, {"0x2330"}, 81559}};
  const std::string head = "apiVersion: gpuprep/v1\nkind: Offer\nmetadata: {name: h100-node}\n";
  auto doc = [&](const std::string& body) {
    return gp::accept::ParseOfferDoc(head + body, "o.yaml", boards);
  };
  auto error = [&](const std::string& body) {
    try {
      doc(body);
    } catch (const gp::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto o =
      doc("gpus: {count: 8, board: 0x2330}\ncpus: 192\nram: 1.5TiB\nnvme: {count: 8, size: 3.84TB}\n");
  const auto spec = gp::accept::ParseOfferSpec("8x0x2330,cpus=192,ram=1.5TiB,nvme=8x3.84TB", boards);
  CHECK(o.gpus == spec.gpus);
  CHECK(o.pci_ids == spec.pci_ids);
  CHECK(o.board_mib == spec.board_mib);
  CHECK(o.cpus == spec.cpus);
  CHECK(o.ram_bytes == spec.ram_bytes);
  CHECK(o.nvme_count == spec.nvme_count);
  CHECK(o.nvme_bytes == spec.nvme_bytes);
  CHECK(doc("ram: 2TB\n").gpus == 0);
  CHECK(error("gpus: {count: 8, board: B300}\n").find("o.yaml:4:25: gpus.board: no board") == 0);
  CHECK(error("gpus: {count: 0, board: 0x2330}\n") ==
        "o.yaml:4:15: gpus.count: a whole number from 1 to 1024");
  CHECK(error("gpus: {board: 0x2330}\n") == "o.yaml:4:15: gpus.board: give gpus.count too");
  CHECK(error("nvme: {count: 8}\n") == "o.yaml:4:15: nvme.count: give nvme.size too");
  CHECK(error("cpus: -4\n") == "o.yaml:4:7: cpus: not a whole number of cores");
  CHECK(error("ram: 2 TB please\n").find("o.yaml:4:6: ram: not a size") == 0);
  CHECK(error("disks: 2\n").find("o.yaml:4:1: unknown key \"disks\"") == 0);
  CHECK(error("cpus: [1, 2]\n").find("o.yaml:4:7: cpus:") == 0);
  CHECK(error("").find("o.yaml:1:1: the offer states nothing") == 0);
  CHECK(error("gpus: {count: 8, board: 0x2330}\n").find("no error") == 0);
  CHECK_THROWS_WITH(gp::accept::ParseOfferDoc("apiVersion: gpuprep/v1\nkind: Offr\nmetadata: {name: x}\n",
                                              "o.yaml", boards),
                    Catch::Contains("o.yaml:2:7: kind must be \"Offer\""));
}

TEST_CASE("accept judge: a quantity the table expects but the recording lacks is skipped", "[accept]") {
  auto r = JudgeIt(Server());  // matmul only: the table also has h2d_gen5 and all_reduce
  const auto* h2d = Find(r, "h2d", -1);
  REQUIRE(h2d != nullptr);
  CHECK(h2d->status == Status::kSkipped);
  CHECK(h2d->reason == "not measured");
  CHECK(Find(r, "all_reduce", -1)->status == Status::kSkipped);
  CHECK(r.verdict == "incomplete");
}
