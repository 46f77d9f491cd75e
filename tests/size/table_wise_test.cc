// Table-wise placement of a recommender's tables (docs/size.md "Embedding tables"): TorchRec's greedy
// partitioner held to its own tests, the Criteo tables placed whole on 8 GPUs, the GPU and host shares adding
// up, and tables given one by one in a Task document, hostile ones refused at their position.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "size/embeddings.h"
#include "size/estimate.h"
#include "size/host.h"
#include "size/task_args.h"
#include "support/cli.h"

using gp::size::PartitionTableWise;
using gp::size::PlaceEmbeddings;
using gp::test::Gpuprep;
using gp::test::TaskFromArgs;
using nlohmann::json;

namespace {
const std::string kTwRec = "--params 10M --workload recommender ";
// mlcommons/training@aa344c7f recommendation_v2/torchrec_dlrm/README.MD, the one-hot Criteo 1TB tables.
const char* kTwCriteo =
    "45833188,36746,17245,7413,20243,3,7114,1441,62,29275261,1572176,345138,10,2209,11267,128,4,974,14,"
    "48937457,11316796,40094537,452104,12606,104,35";
}  // namespace

// pytorch/torchrec@a48cef79 torchrec/distributed/planner/tests/test_partitioners.py,
// TestGreedyPerfPartitioner: test_tw_balanced_perf_device (4 tables of equal storage and perf 40 + 30 + 20 +
// 10 on 2 GPUs: ranks 0, 1, 0, 1) and test_tw_unbalanced_perf_device (the first table's perf 4 x 75: ranks 0,
// 1, 1, 1). The tie between equal GPUs goes by local rank, then rank (partitioners.py
// OrderedDeviceHardware.__lt__): on 2 servers of 8, ranks 0, 8, 1, 9. Tolerance: exact.
TEST_CASE("table-wise: TorchRec's greedy partitioner, as its tests place tables", "[size][embeddings]") {
  using L = gp::size::TableLoad;
  CHECK(PartitionTableWise({L{1000, 100}, L{1000, 100}, L{1000, 100}, L{1000, 100}}, 2, 2) ==
        std::vector<int>{0, 1, 0, 1});
  CHECK(PartitionTableWise({L{1000, 300}, L{1000, 100}, L{1000, 100}, L{1000, 100}}, 2, 2) ==
        std::vector<int>{0, 1, 1, 1});
  CHECK(PartitionTableWise({L{1, 1}, L{1, 1}, L{1, 1}, L{1, 1}}, 16, 8) == std::vector<int>{0, 8, 1, 9});
  // Largest storage first: the second table (3) goes first, then the third (2), then the first (1).
  CHECK(PartitionTableWise({L{1, 1}, L{3, 1}, L{2, 1}}, 3, 8) == std::vector<int>{2, 0, 1});
}

// The 26 Criteo tables, 128 fp32 columns, SGD, on 8 GPUs: sorted by size, the 1st, 9th, 17th and 25th
// largest (48,937,457, 36,746, 1,441 and 4 rows) land on rank 0, the heaviest GPU: 48,975,648 rows x 128 x 4
// B = 25.08 GB, where row-wise sharding gives each GPU 91.1 / 8 = 11.4 GB. Tolerance: exact.
TEST_CASE("table-wise: the Criteo tables placed whole on 8 GPUs", "[size][embeddings]") {
  const std::string base =
      kTwRec + "--gpus 8 --embedding-optimizer sgd --embedding-dim 128 --embedding-rows " + kTwCriteo;
  const auto tw = PlaceEmbeddings(TaskFromArgs(base + " --embedding-sharding table"));
  REQUIRE(tw.rank_of_table.size() == 26);
  CHECK(tw.rank_of_table[19] == 0);  // 48,937,457 rows
  CHECK(tw.rank_of_table[0] == 1);   // 45,833,188
  CHECK(tw.rank_of_table[21] == 2);  // 40,094,537
  CHECK(tw.gpu_per_gpu == 48975648.0 * 128 * 4);
  CHECK(tw.rows_per_gpu == 48975648.0);
  const auto rw = PlaceEmbeddings(TaskFromArgs(base));
  CHECK(rw.rank_of_table.empty());
  CHECK(tw.gpu_per_gpu > 2 * rw.gpu_per_gpu);
  // The estimate's term is the heaviest GPU's.
  const auto e = gp::size::EstimateTask(TaskFromArgs(base + " --embedding-sharding table"));
  REQUIRE(e.Find("embeddings") != nullptr);
  CHECK(e.Find("embeddings")->bytes == tw.gpu_per_gpu);
}

TEST_CASE("table-wise: 1e9 rows on 8 GPUs add up, placed and offloaded", "[size][embeddings]") {
  const std::string base =
      kTwRec +
      "--gpus 8 --embedding-sharding table --embedding-rows 1e9,1e6,1e6 --embedding-dim 16 "
      "--embedding-offload";
  const auto p = PlaceEmbeddings(TaskFromArgs(base));
  double host = 0;
  for (double h : p.host_by_rank) host += h;
  CHECK(p.host_by_rank.size() == 8);
  CHECK(host == p.table + p.optimizer);  // AdamW: 3 x (1.002e9 x 16 x 4)
  CHECK(p.host_per_gpu == 1e9 * 16 * 4 * 3);
  CHECK(p.HostPerServer(8) == host);
  CHECK(p.HostPerServer(4) == host);  // the tables are on ranks 0 to 2, one server of 4
  // The heaviest GPU caches 0.2 of its host share, with the cache's state per row.
  CHECK(p.gpu_per_gpu == std::round(192e9 * 0.2) + std::ceil(1e9 * (4 + 0.2 * 16)));
  // A server's RAM holds its GPUs' tables: 8 per server, all of them.
  const auto t = TaskFromArgs(base);
  const auto need = gp::size::NeedFor(t, gp::size::EstimateTask(t), 8, 1, 80e9);
  CHECK(need.ram_embeddings == host);
}

TEST_CASE("table-wise: tables one by one in a Task document", "[size][embeddings][cli]") {
  gp::test::TempRoot root;
  root.Write("/task.yaml",
             "apiVersion: gpuprep/v1\n"
             "kind: Task\n"
             "metadata: {name: dlrm}\n"
             "params: 10M\n"
             "parallel: {gpus: 2}\n"
             "host:\n"
             "  embedding_tables: [100x20, 110x40x2, 120x60, 130x80]\n"
             "  embedding_sharding: table\n"
             "  embedding_optimizer: sgd\n");
  auto r = Gpuprep({"size", "--task", root.path() + "/task.yaml", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json e = json::parse(r.out)["task"]["embeddings"];
  REQUIRE(e["tables"].size() == 4);
  CHECK(e["sharding"] == "table");
  CHECK(e["tables"][1]["bytes_per_value"] == 2);
  CHECK(e["tables"][0]["bytes_per_value"] == 4);
  CHECK(e["table_bytes"] == 100 * 20 * 4 + 110 * 40 * 2 + 120 * 60 * 4 + 130 * 80 * 4);
  // Largest first (130x80, 120x60, 110x40x2, 100x20), perf by dimension: 80 onto GPU 0, 60 onto 1, 40 onto 1
  // (60 < 80), 20 onto 0 (80 < 100).
  CHECK(e["tables"][3]["gpu"] == 0);
  CHECK(e["tables"][2]["gpu"] == 1);
  CHECK(e["tables"][1]["gpu"] == 1);
  CHECK(e["tables"][0]["gpu"] == 0);
  CHECK(e["gpu_bytes_per_gpu"] == 130 * 80 * 4 + 100 * 20 * 4);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[100x20, 1000000000000000000x16]", "table 2"},
      {"[100x0]", "table 1"},
      {"[100x16x3]", "table 1"},
      {"[100]", "table 1"},
      {"[100x16x4x4]", "table 1"},
  };
  for (const auto& [tables, what] : bad) {
    root.Write("/bad.yaml",
               "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: dlrm}\nparams: 10M\n"
               "host:\n  embedding_tables: " +
                   tables + "\n");
    auto b = Gpuprep({"size", "--task", root.path() + "/bad.yaml"});
    INFO(tables << " -> " << b.err);
    CHECK(b.code == 2);
    CHECK(b.err.find("bad.yaml:6:21: " + what) != std::string::npos);
    CHECK(std::count(b.err.begin(), b.err.end(), '\n') == 1);
    CHECK(b.out.empty());
  }
  auto both = Gpuprep({"size", "--params", "10M", "--embedding-tables", "100x16", "--embedding-rows", "100",
                       "--embedding-dim", "16"});
  CHECK(both.code == 2);
  CHECK(both.err.find("--embedding-tables") != std::string::npos);
  auto alone = Gpuprep({"size", "--params", "10M", "--embedding-sharding", "table"});
  CHECK(alone.code == 2);
  CHECK(alone.err.find("--embedding-sharding") != std::string::npos);
}
