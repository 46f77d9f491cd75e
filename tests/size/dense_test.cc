// A recommender's dense part (docs/size.md "The dense part"): TorchRec's DLRM counted from its layer sizes,
// MLCommons' DLRM reference configurations held against the hardware they ran on, servers recommended and a
// host judged for a recommender, and hostile dense descriptions refused with one line.
#include "size/dense.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli/size_inputs.h"
#include "manifest/loader.h"
#include "size/estimate.h"
#include "size/host_check.h"
#include "size/recommend.h"
#include "size/task_args.h"
#include "support/cli.h"

using gp::size::CountDense;
using gp::test::Gpuprep;
using gp::test::TaskFromArgs;
using nlohmann::json;

namespace {
// mlcommons/training@aa344c7f recommendation_v2/torchrec_dlrm/README.MD: the one-hot Criteo 1TB example
// (--num_embeddings_per_feature, --embedding_dim 128, --dense_arch_layer_sizes 512,256,128,
// --over_arch_layer_sizes 1024,1024,512,256,1) and the MLPerf DLRM-DCNv2 command (rows capped at 40M,
// --interaction_type=dcn --dcn_num_layers=3 --dcn_low_rank_dim=512 --adagrad, GLOBAL_BATCH_SIZE=65536 over
// WORLD_SIZE=8: --batch_size 8192).
const std::string kDenseLayers =
    "--dense-layers 512,256,128 --over-layers 1024,1024,512,256,1 --embedding-dim 128 ";
const std::string kDenseCriteo =
    "--embedding-rows "
    "45833188,36746,17245,7413,20243,3,7114,1441,62,29275261,1572176,345138,10,2209,11267,128,"
    "4,974,14,48937457,11316796,40094537,452104,12606,104,35 ";
const std::string kDenseDcnV2 =
    "--embedding-rows "
    "40000000,39060,17295,7424,20265,3,7122,1543,63,40000000,3067956,405282,10,2209,11938,155,"
    "4,976,14,40000000,40000000,40000000,590152,12973,108,36 --interaction dcn --dcn-layers 3 --dcn-rank "
    "512 ";
// One A100 SXM4 40GB as nvidia-smi reports it (the catalogue's row): 40960 MiB.
const double kDenseA100 = 40960.0 * 1024 * 1024;

const std::vector<gp::size::Board>& DenseBoards() {
  static const std::vector<gp::size::Board> kBoards =
      gp::cli::CatalogueBoards(gp::manifest::EmbeddedCompat());
  return kBoards;
}
}  // namespace

// Parameters from TorchRec's layer code (dense.cc gives the rules), by hand for 26 tables of 128:
//   dense arch 13 > 512 > 256 > 128: 13x512+512 + 512x256+256 + 256x128+128 = 171,392;
//   dot interaction output 128 + 26 x 27 / 2 = 479; over arch 479 > 1024 > 1024 > 512 > 256 > 1:
//   491,520 + 1,049,600 + 524,800 + 131,328 + 257 = 2,197,505;
//   DCN over 27 x 128 = 3456 inputs: 3 x (2 x 3456 x 512 + 3456) = 10,627,200; its over arch from 3456:
//   3,539,968 + 1,049,600 + 524,800 + 131,328 + 257 = 5,245,953. Tolerance: exact.
TEST_CASE("dense: DLRM and DLRM-DCN parameters from their layer sizes", "[size][dense]") {
  const auto dot = CountDense(TaskFromArgs(kDenseLayers + kDenseCriteo));
  REQUIRE(dot.parts.size() == 3);
  CHECK(dot.parts[0].params == 171392);
  CHECK(dot.parts[1].params == 0);
  CHECK(dot.parts[1].out == 479);
  CHECK(dot.parts[2].params == 2197505);
  CHECK(dot.params == 171392 + 2197505);
  // Values kept per sample: 13 + 512 + 256 + 128; 27 x 128; 479 + 1024 + 1024 + 512 + 256 + logit + label.
  CHECK(dot.saved == 909 + 3456 + 3297);
  const auto dcn = CountDense(TaskFromArgs(kDenseLayers + kDenseDcnV2));
  CHECK(dcn.parts[1].params == 10627200);
  CHECK(dcn.parts[1].saved == 3 * (2 * 3456 + 512));
  CHECK(dcn.parts[2].params == 5245953);
  CHECK(dcn.params == 16044545);
  const auto t = TaskFromArgs(kDenseLayers + kDenseDcnV2);
  CHECK(t.arch.display == "DLRM-DCN");
  CHECK(t.params_override == 16044545);
  CHECK(t.precision == gp::size::Precision::kFp32);  // dlrm_main.py runs no autocast
}

// The README's hardware: AWS p4d.24xlarge, 8x A100 40GB, 96 vCPUs, 1152 GiB RAM. The MLPerf DLRM-DCNv2 run
// (Adagrad: one fp32 state per value, dense and tables; 8192 samples per GPU) must fit it with its tables
// row-wise in GPU memory; the one-hot example's single-GPU row (local batch 16384, SGD) fits one A100 only
// with the tables in host RAM. Tolerance: fits or not (the README publishes hardware, not memory).
TEST_CASE("dense: MLCommons' DLRM runs fit the hardware they ran on", "[size][dense]") {
  const std::string mlperf = kDenseLayers + kDenseDcnV2 +
                             "--gpus 8 --micro-batch 8192 --optimizer sgd-momentum "
                             "--embedding-optimizer one-state";
  const auto t = TaskFromArgs(mlperf);
  const auto e = gp::size::EstimateTask(t);
  CHECK_FALSE(e.lower_bound);
  REQUIRE(e.Find("activations") != nullptr);
  // 29,455 values per sample (909 + 22,272 + 6,274) x 4 B x 8192.
  CHECK(e.Find("activations")->bytes == (909.0 + 22272 + 6274) * 4 * 8192);
  CHECK(e.per_gpu < kDenseA100);
  CHECK(e.per_gpu > 0.5 * kDenseA100);  // the tables' 26 GB per GPU dominate
  // A p4d.24xlarge as the README lists it fits, GPUs, CPUs and RAM.
  gp::size::HostSpec h;
  h.label = "p4d.24xlarge";
  h.cpus = 96;
  h.memory = uint64_t{1152} << 30;
  h.disk_free = uint64_t{8} * 1000 * 1000 * 1000 * 1000;  // 8 x 1 TB NVMe
  h.nvswitches = 6;
  const auto board = std::find_if(DenseBoards().begin(), DenseBoards().end(),
                                  [](const gp::size::Board& b) { return b.name == "A100 SXM4 40GB"; });
  REQUIRE(board != DenseBoards().end());
  for (int i = 0; i < 8; ++i) h.gpus.push_back({"NVIDIA A100-SXM4-40GB", "0x20b0", std::nullopt, *board});
  const auto v = gp::size::JudgeHost(t, h);
  INFO(v.summary);
  for (const auto& item : v.items) INFO(item.what << ": " << item.status << " " << item.detail);
  CHECK(v.fits);
  // Servers are recommended: the estimate is not a lower bound, and an 8x A100 40GB server is among them.
  const auto r = gp::size::Recommend(t, DenseBoards());
  CHECK(r.not_recommended.empty());
  bool a100 = false;
  for (const auto& row : r.rows)
    if (row.board.name == "A100 SXM4 40GB" && row.best) a100 = row.best->gpus <= 8;
  CHECK(a100);

  const std::string one = kDenseLayers + kDenseCriteo + "--gpus 1 --micro-batch 16384 --optimizer sgd";
  CHECK(gp::size::EstimateTask(TaskFromArgs(one)).per_gpu > kDenseA100);
  CHECK(gp::size::EstimateTask(TaskFromArgs(one + " --embedding-offload")).per_gpu < kDenseA100);
}

TEST_CASE("dense: the parts in the text and the JSON", "[size][dense][cli]") {
  std::vector<std::string> args = {"size",
                                   "--dense-layers",
                                   "512,256,128",
                                   "--over-layers",
                                   "1024,1024,512,256,1",
                                   "--embedding-dim",
                                   "128",
                                   "--embedding-rows",
                                   "1e6,2e6",
                                   "--micro-batch",
                                   "1024",
                                   "--json"};
  auto r = Gpuprep(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  const json d = j["task"]["dense"];
  REQUIRE(d["parts"].size() == 3);
  CHECK(d["parts"][0]["name"] == "dense arch");
  CHECK(d["interaction"] == "dot");
  CHECK(d["params"] == j["task"]["params"]);
  CHECK(j["servers"]["not_recommended"].is_null());
  args.pop_back();
  auto text = Gpuprep(args);
  CHECK(text.out.find("DLRM: training, fp32") != std::string::npos);
  CHECK(text.out.find("DENSE PART: ") != std::string::npos);
  CHECK(text.out.find("not estimated") == std::string::npos);
}

TEST_CASE("dense: hostile dense descriptions, one line and exit 2", "[size][dense][cli]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dense-layers 512,256,64 --over-layers 8,1", "--dense-layers"},  // last != dim 128
      {"--dense-layers 512,x,128 --over-layers 8,1", "--dense-layers"},
      {"--dense-layers 512,0,128 --over-layers 8,1", "--dense-layers"},
      {"--dense-layers 512,256,128", "--dense-layers"},  // no over arch
      {"--dense-layers 512,256,128 --over-layers 1", "--over-layers"},
      {"--dense-layers 512,256,128 --over-layers 8,1 --dcn-rank 64", "--dcn-rank"},
      {"--dense-layers 512,256,128 --over-layers 8,1 --interaction cross", "--interaction"},
      {"--dense-layers 512,256,128 --over-layers 8,1 --params 10M", "--params"},
      {"--dense-layers 512,256,128 --over-layers 8,1 --seq 512", "--seq"},
      {"--over-layers 8,1 --params 10M", "--over-layers"},
      {"--dense-layers 512,256,128 --over-layers 8,1 --embedding-dim 128,64", "--embedding-dim"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"size", "--embedding-rows", "1e6,2e6"};
    if (extra.find("--embedding-dim") == std::string::npos)
      args.insert(args.end(), {"--embedding-dim", "128"});
    for (const auto& w : gp::SplitWords(extra)) args.push_back(w);
    const auto r = Gpuprep(args);
    INFO(extra << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
}
