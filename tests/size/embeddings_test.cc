// A recommender's embedding tables (docs/size.md "Embedding tables"): placed as TorchRec's planner places
// them, held against the figures TorchRec's own tests and MLCommons' DLRM reference publish, the GPU and host
// shares adding up to the tables and their optimizer states, and hostile table descriptions refused.
#include "size/embeddings.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "size/estimate.h"
#include "size/task_args.h"
#include "support/cli.h"
#include "util/error.h"

using gp::size::PlaceEmbeddings;
using gp::test::Gpuprep;
using gp::test::TaskFromArgs;
using nlohmann::json;

namespace {
const std::string kRec = "--params 10M --workload recommender ";
// The Criteo 1TB tables of MLCommons' torchrec_dlrm README (mlcommons/training@aa344c7f,
// recommendation_v2/torchrec_dlrm/README.MD, "--num_embeddings_per_feature"): the one-hot example and the
// MLPerf DLRM-DCNv2 benchmark (rows capped at 40M).
const char* kCriteo =
    "45833188,36746,17245,7413,20243,3,7114,1441,62,29275261,1572176,345138,10,2209,11267,128,4,974,14,"
    "48937457,11316796,40094537,452104,12606,104,35";
const char* kDcnV2 =
    "40000000,39060,17295,7424,20265,3,7122,1543,63,40000000,3067956,405282,10,2209,11938,155,4,976,14,"
    "40000000,40000000,40000000,590152,12973,108,36";
}  // namespace

// pytorch/torchrec@a48cef79 torchrec/distributed/planner/tests/test_enumerators.py: four tables of
// 100 + 10i rows and 20 + 20i columns, fp32, no optimizer, row-wise over 8 GPUs. EXPECTED_RW_SHARD_STORAGE
// (in GPU memory) and EXPECTED_UVM_CACHING_RW_SHARD_STORAGE (host RAM, cache ratio 0.2) of the first shard.
// Their GPU figures add the batch's input and output buffers (the same in both lists), which gpuprep does
// not count, so the GPU side is held to the difference of the two lists. Tolerance: exact (byte counts).
TEST_CASE("embeddings: TorchRec's planner's table set, to the byte", "[size][embeddings]") {
  struct Row {
    int rows, dim;
    double ddr, rw_hbm, uvm_hbm, aux_rows;
  };
  const Row rows[] = {{100, 20, 1040, 166928, 166096, 13},
                      {110, 40, 2240, 1003712, 1001920, 14},
                      {120, 60, 3600, 1007120, 1004240, 15},
                      {130, 80, 5440, 2653504, 2649152, 17}};
  for (const auto& r : rows) {
    INFO(r.rows << " x " << r.dim);
    const std::string args = kRec + "--gpus 8 --embedding-optimizer sgd --embedding-rows " +
                             std::to_string(r.rows) + " --embedding-dim " + std::to_string(r.dim);
    const auto on_gpu = PlaceEmbeddings(TaskFromArgs(args));
    CHECK(on_gpu.gpu_per_gpu == r.ddr);  // the same shard, in GPU memory
    CHECK(on_gpu.host_per_gpu == 0);
    const auto cached = PlaceEmbeddings(TaskFromArgs(args + " --embedding-offload"));
    CHECK(cached.host_per_gpu == r.ddr);
    const double aux = std::ceil(r.aux_rows * (4 + 0.2 * 16));  // get_expected_cache_aux_size
    CHECK(cached.gpu_per_gpu - aux == r.uvm_hbm - (r.rw_hbm - r.ddr));
  }
  const auto all = PlaceEmbeddings(
      TaskFromArgs(kRec + "--gpus 8 --embedding-optimizer sgd --embedding-rows 100,110,120,130 "
                          "--embedding-dim 20,40,60,80"));
  CHECK(all.gpu_per_gpu == 1040 + 2240 + 3600 + 5440);
}

TEST_CASE("embeddings: 1e9 rows on 8 GPUs add up, sharded and offloaded", "[size][embeddings]") {
  const std::string base = kRec + "--gpus 8 --embedding-rows 1e9 --embedding-dim 16";
  // AdamW's two states per value: 64 GB of tables + 128 GB of states.
  const auto on_gpu = PlaceEmbeddings(TaskFromArgs(base));
  CHECK(on_gpu.table == 64e9);
  CHECK(on_gpu.optimizer == 128e9);
  CHECK(on_gpu.gpu_per_gpu * 8 == on_gpu.table + on_gpu.optimizer);
  CHECK(on_gpu.host_per_gpu == 0);
  const auto off = PlaceEmbeddings(TaskFromArgs(base + " --embedding-offload"));
  CHECK(off.host_per_gpu * 8 == off.table + off.optimizer);
  // The GPU keeps a 0.2 share of its shard and the cache's state: 125M rows x (4 + 0.2 x 16) bytes.
  CHECK(off.gpu_per_gpu == 0.2 * 24e9 + 125e6 * 7.2);
  // Row-wise Adagrad: one fp32 value per row, 1/16 of the table.
  const auto rw = PlaceEmbeddings(TaskFromArgs(base + " --embedding-optimizer rowwise-adagrad"));
  CHECK(rw.optimizer == 4e9);
  // The estimate carries the GPU share as a term, the host share as CPU RAM.
  const auto e = gp::size::EstimateTask(TaskFromArgs(base + " --embedding-offload"));
  REQUIRE(e.Find("embeddings") != nullptr);
  CHECK(e.Find("embeddings")->bytes == off.gpu_per_gpu);
  CHECK(e.host_embeddings_per_gpu == off.host_per_gpu);
}

// The one-hot example's table "Collective Size of Embedding Tables (GiB)" is 91.10 for 26 tables of 128 fp32
// columns: 91.107e9 bytes, so the README's unit is 10^9 bytes (84.85 GiB). Tolerance: 0.01 GB (the README
// truncates to two decimals). Its single-GPU run (one A100 40GB, 40960 MiB) holds the tables only in host
// RAM.
TEST_CASE("embeddings: MLCommons' DLRM reference, Criteo 1TB", "[size][embeddings]") {
  const auto p = PlaceEmbeddings(
      TaskFromArgs(kRec + "--embedding-optimizer sgd --embedding-dim 128 " + "--embedding-rows " + kCriteo));
  CHECK(std::abs(p.table / 1e9 - 91.10) < 0.01);
  const double a100 = 40960.0 * 1024 * 1024;
  const std::string one = kRec + "--gpus 1 --optimizer sgd --embedding-dim 128 --embedding-rows " + kCriteo;
  CHECK(gp::size::EstimateTask(TaskFromArgs(one)).per_gpu > a100);
  const auto cached = gp::size::EstimateTask(TaskFromArgs(one + " --embedding-offload"));
  CHECK(cached.per_gpu < a100);
  CHECK(cached.host_embeddings_per_gpu == p.table);
  // MLPerf DLRM-DCNv2: the same 26 features capped at 40M rows, Adagrad (--adagrad: torch.optim.Adagrad,
  // one state per value) over WORLD_SIZE=8: 204,184,588 rows x 128 x 4 B x 2 / 8 per GPU, which fits the
  // README's 8x A100 40GB instances.
  const auto dcn = PlaceEmbeddings(TaskFromArgs(kRec + "--gpus 8 --embedding-optimizer one-state " +
                                                "--embedding-dim 128 --embedding-rows " + kDcnV2));
  CHECK(dcn.table == 204184588.0 * 128 * 4);
  CHECK(std::abs(dcn.gpu_per_gpu - 204184588.0 * 128 * 4 * 2 / 8) < 26 * 128 * 4 * 2);  // ceil per table
  CHECK(dcn.gpu_per_gpu < a100);
}

TEST_CASE("embeddings: the tables are in the total, and in the JSON", "[size][embeddings][cli]") {
  auto r = Gpuprep({"size", "--params", "10M", "--workload", "recommender", "--embedding-rows", "1e9",
                    "--embedding-dim", "16", "--json"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  bool found = false;
  for (const auto& term : j["per_gpu"]["terms"]) {
    if (term["key"] != "embeddings") continue;
    found = true;
    CHECK(term["bytes"] == 192000000000LL);
  }
  CHECK(found);
  CHECK(j["per_gpu"]["total_bytes"].get<double>() > 192e9);
  CHECK(j["task"]["embeddings"]["placement"] == "gpu");
  CHECK(j["task"]["embeddings"]["table_bytes"] == 64000000000LL);
  auto text = Gpuprep({"size", "--params", "10M", "--workload", "recommender", "--embedding-rows", "1e9",
                       "--embedding-dim", "16"});
  CHECK(text.out.find("embedding tables") != std::string::npos);
  CHECK(text.out.find("the dense part is a bare parameter count") != std::string::npos);
  CHECK(text.out.find("seq 2048") == std::string::npos);
  CHECK(text.out.find("EMBEDDING TABLES: 1 table(s), 64.00 GB + adam optimizer states 128.00 GB") !=
        std::string::npos);
}

TEST_CASE("embeddings: hostile table descriptions, one line and exit 2", "[size][embeddings][cli]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--embedding-rows", "1e18", "--embedding-dim", "16"}, "--embedding-rows"},
      {{"--embedding-rows", "1e9", "--embedding-dim", "0"}, "--embedding-dim"},
      {{"--embedding-rows", "1e9,0", "--embedding-dim", "16"}, "--embedding-rows"},
      {{"--embedding-rows", "1e9,5", "--embedding-dim", "16,8,4"}, "--embedding-dim"},
      {{"--embedding-optimizer", "adam"}, "--embedding-optimizer"},
      {{"--embedding-rows", "1e9", "--embedding-dim", "16", "--embedding-cache-ratio", "2"},
       "--embedding-cache-ratio"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"size", "--params", "10M", "--workload", "recommender"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = Gpuprep(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
}

TEST_CASE("embeddings: tables one by one in a Task document", "[size][embeddings][cli]") {
  gp::test::TempRoot root;
  root.Write("/task.yaml",
             "apiVersion: gpuprep/v1\n"
             "kind: Task\n"
             "metadata: {name: dlrm}\n"
             "params: 10M\n"
             "parallel: {gpus: 8}\n"
             "host:\n"
             "  embedding_rows: [100, 110, 120, 130]\n"
             "  embedding_dim: [20, 40, 60, 80]\n"
             "  embedding_optimizer: sgd\n"
             "  embedding_offload: true\n");
  auto r = Gpuprep({"size", "--task", root.path() + "/task.yaml", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json e = json::parse(r.out)["task"]["embeddings"];
  CHECK(e["tables"].size() == 4);
  CHECK(e["tables"][3]["dim"] == 80);
  CHECK(e["placement"] == "host");
  CHECK(e["host_bytes_per_gpu"] == 1040 + 2240 + 3600 + 5440);
  root.Write("/bad.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: dlrm}\nparams: 10M\n"
             "host: {embedding_rows: [100, 110], embedding_dim: [20, 0]}\n");
  auto b = Gpuprep({"size", "--task", root.path() + "/bad.yaml"});
  CHECK(b.code == 2);
  CHECK(b.err.find("bad.yaml:5:") != std::string::npos);
}
