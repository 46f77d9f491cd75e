// The servers that fit (size/recommend.h) on the shipped catalogue: every row's layout fits the board's
// memory, tensor parallelism stays inside an NVLink domain, PCIe-only sharding, cross-server traffic and
// consumer cards without peer-to-peer are flagged, and what would fit when nothing does.
#include "size/recommend.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "cli/size_inputs.h"
#include "manifest/loader.h"
#include "size/task_args.h"

using gp::size::Board;
using gp::size::BoardRow;
using gp::size::Recommendation;

namespace {

const std::vector<Board>& Boards() {
  static const std::vector<Board> kBoards = gp::cli::CatalogueBoards(gp::manifest::EmbeddedCompat());
  return kBoards;
}

const BoardRow& Row(const Recommendation& r, const std::string& board) {
  for (const BoardRow& row : r.rows)
    if (row.board.name == board) return row;
  FAIL("no row for " << board);
  return r.rows.front();
}

bool HasFlag(const gp::size::Option& o, const std::string& part) {
  return std::any_of(o.flags.begin(), o.flags.end(),
                     [&](const std::string& f) { return f.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("recommend: boards of the catalogue carry their sourced memory", "[size][recommend]") {
  const auto& b = Boards();
  auto find = [&](const std::string& name) {
    auto it = std::find_if(b.begin(), b.end(), [&](const Board& x) { return x.name == name; });
    REQUIRE(it != b.end());
    return *it;
  };
  CHECK(find("H100 SXM5 80GB").memory_mib == 81559);  // nvidia-smi's total, not 80 x 1024
  CHECK_FALSE(find("H100 SXM5 80GB").Approximate());
  CHECK(find("H100 SXM5 80GB").nvlink == 8);
  CHECK(find("L40S").memory_mib == 46068);
  CHECK(find("L40S").nvlink == 0);
  CHECK(find("GB10").Unified());
  CHECK(find("GB10").Approximate());
  CHECK(find("GeForce RTX 4090").p2p == "no");
  CHECK_FALSE(find("GeForce RTX 4090").datacenter);
  for (const Board& x : b) {
    INFO(x.name);
    if (x.memory_mib == 0) continue;
    CHECK_FALSE(x.memory_source.empty());
    CHECK_FALSE(x.link_source.empty());
    CHECK_FALSE(x.server_sizes.empty());
    if (x.form == "sxm") CHECK(x.server_sizes.front() >= 4);
  }
}

TEST_CASE("recommend: llama-3-70b LoRA, which servers fit and why", "[size][recommend]") {
  const auto t = gp::test::TaskFromArgs("--model llama-3-70b --method lora");
  const Recommendation r = gp::size::Recommend(t, Boards());
  REQUIRE_FALSE(r.rows.empty());
  for (const BoardRow& row : r.rows) {
    INFO(row.board.name);
    if (!row.best) {
      CHECK_FALSE(row.why_not.empty());
      continue;
    }
    const auto& o = *row.best;
    CHECK(o.at.per_gpu <= o.memory);  // it fits the memory nvidia-smi reports
    CHECK(o.memory == static_cast<double>(row.board.MemoryBytes()));
    CHECK(o.tp <= std::max(1, row.board.DomainIn(o.per_server)));  // TP only inside an NVLink domain
    CHECK(o.gpus == o.servers * o.per_server);
    if (o.servers > 1) CHECK(o.gpus % 8 == 0);
    if (o.servers == 1)
      CHECK(std::find(row.board.server_sizes.begin(), row.board.server_sizes.end(), o.per_server) !=
            row.board.server_sizes.end());
  }
  // Fitting rows first, fewest GPUs first.
  for (size_t i = 1; i < r.rows.size(); ++i)
    if (r.rows[i].best) {
      REQUIRE(r.rows[i - 1].best);
      CHECK(r.rows[i - 1].best->gpus <= r.rows[i].best->gpus);
    }
  const BoardRow& h100 = Row(r, "H100 SXM5 80GB");
  REQUIRE(h100.best);
  CHECK(h100.best->servers == 1);
  CHECK(h100.best->link == "NVLink");
  CHECK_FALSE(HasFlag(*h100.best, "across PCIe-only GPUs"));
  // Without checkpointing the activations alone outgrow an L40S; checkpointing is the change that fits, and
  // sharding 8 L40S over PCIe is flagged with what it moves.
  const BoardRow& l40s = Row(r, "L40S");
  REQUIRE_FALSE(l40s.best);
  CHECK(l40s.why_not.find("they do not shrink with data parallelism") != std::string::npos);
  REQUIRE_FALSE(l40s.alternatives.empty());
  const auto& ckpt = l40s.alternatives.front();
  CHECK(ckpt.change == "--grad-checkpointing full");
  CHECK(ckpt.option.tp == 1);
  CHECK(ckpt.option.link.rfind("PCIe", 0) == 0);
  if (ckpt.option.gpus > 1 && ckpt.option.servers == 1)
    CHECK(HasFlag(ckpt.option, "across PCIe-only GPUs moves"));
  // Boards without a sourced size are listed, not judged.
  for (const std::string& u : r.unknown)
    CHECK(
        std::none_of(r.rows.begin(), r.rows.end(), [&](const BoardRow& row) { return row.board.name == u; }));
}

TEST_CASE("recommend: ZeRO-3 traffic is about 3x the model's bytes and crosses the network between servers",
          "[size][recommend]") {
  const auto t = gp::test::TaskFromArgs("--model llama-2-70b --grad-checkpointing full");
  const Recommendation r = gp::size::Recommend(t, Boards());
  const BoardRow& h100 = Row(r, "H100 SXM5 80GB");
  REQUIRE(h100.best);
  const auto& o = *h100.best;
  CHECK(o.servers > 1);
  CHECK(o.gpus % 8 == 0);
  CHECK(o.link == "NVLink + network");
  if (o.strategy == gp::size::Strategy::kZero3 || o.strategy == gp::size::Strategy::kFsdp) {
    // 2 all-gathers of the 16-bit weights and a reduce-scatter of the gradients: ~3x the 16-bit model.
    const double model = 2.0 * static_cast<double>(o.at.params_per_gpu);
    CHECK(o.traffic.bytes / model == Approx(3.0).margin(1.0));
    CHECK(o.traffic.network_bytes == Approx(o.traffic.bytes));
  }
  CHECK(o.traffic.network_bytes > 0);
  CHECK(HasFlag(o, "over the network"));
}

TEST_CASE("recommend: consumer cards without peer-to-peer are said so", "[size][recommend]") {
  const auto t = gp::test::TaskFromArgs("--model llama-3-8b --method lora");
  const Recommendation r = gp::size::Recommend(t, Boards());
  const BoardRow& rtx = Row(r, "GeForce RTX 4090");
  REQUIRE(rtx.best);
  if (rtx.best->gpus > 1) {
    CHECK(rtx.best->link.rfind("PCIe, no peer-to-peer", 0) == 0);
    CHECK(HasFlag(*rtx.best, "no peer-to-peer"));
  }
  const auto small = gp::test::TaskFromArgs("--model llama-3.2-1b --method lora");
  auto multi = gp::size::BestAt(small, rtx.board, 2, 2, 1);
  REQUIRE(multi);
  CHECK(multi->link == "PCIe, no peer-to-peer");
  CHECK(HasFlag(*multi, "NCCL_P2P_DISABLE=1"));
}

TEST_CASE("recommend: where nothing fits, what would, with the new numbers", "[size][recommend]") {
  const auto t = gp::test::TaskFromArgs("--model llama-2-70b --grad-checkpointing full");
  gp::size::SearchLimits limits;
  limits.max_servers = 2;
  std::vector<Board> only;
  for (const Board& b : Boards())
    if (b.name == "L40S") only.push_back(b);
  REQUIRE(only.size() == 1);
  const Recommendation r = gp::size::Recommend(t, only, limits);
  REQUIRE(r.rows.size() == 1);
  CHECK_FALSE(r.rows[0].best);
  CHECK(r.rows[0].why_not.find("the closest layout needs") == 0);
  REQUIRE_FALSE(r.rows[0].alternatives.empty());
  for (const auto& a : r.rows[0].alternatives) {
    INFO(a.change);
    CHECK(a.option.at.per_gpu <= a.option.memory);
  }
  REQUIRE_FALSE(r.alternatives.empty());
  const bool lora = std::any_of(r.alternatives.begin(), r.alternatives.end(),
                                [](const gp::size::Alternative& a) { return a.change == "--method lora"; });
  CHECK(lora);
  for (const auto& a : r.alternatives) CHECK(a.option.at.per_gpu <= a.option.memory);
}

TEST_CASE("recommend: a lower bound recommends no server", "[size][recommend]") {
  const auto t = gp::test::TaskFromArgs("--params 1e9 --micro-batch 16");
  const Recommendation r = gp::size::Recommend(t, Boards());
  CHECK(r.rows.empty());
  CHECK(r.alternatives.empty());
  for (const BoardRow& row : r.rows) CHECK_FALSE(row.best);
}
