// NeedFor and the reference servers (host.h).
#include "size/host.h"

#include "size/embeddings.h"
#include "size/format.h"

namespace gp::size {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kGB = 1000000000;  // "TB" in the sources is read as 10^12 bytes
constexpr const char* kTorchx =
    "https://github.com/meta-pytorch/torchx/blob/3297a6e2/torchx/specs/named_resources_aws.py";

// Bytes per parameter of the optimizer states of a checkpoint: AdamW keeps two moments (fp32, or bf16 in
// pure bf16 training), 8-bit AdamW two bytes, SGD with momentum one state.
double StateBytes(const Task& t, double state) {
  switch (t.optimizer) {
    case Optimizer::kAdamW:
      return 2 * state;
    case Optimizer::kAdamW8bit:
      return 2;
    case Optimizer::kSgdMomentum:
      return state;
    case Optimizer::kSgd:
      return 0;
  }
  return 0;
}

bool Mixed(Precision p) {
  return p == Precision::kBf16Mixed || p == Precision::kFp16Mixed || p == Precision::kFp8;
}

}  // namespace

const std::vector<ReferenceServer>& ReferenceServers() {
  static const std::vector<ReferenceServer> kServers = {
      {"AWS p4d.24xlarge", 8, 96, true, 1152 * kGiB, "1152 GiB", "", kTorchx},
      {"AWS p5.48xlarge", 8, 192, true, 2048 * kGiB, "2048 GiB", "", kTorchx},
      {"AWS p5en.48xlarge", 8, 192, true, 2048 * kGiB, "2048 GiB", "", kTorchx},
      {"AWS g5.48xlarge", 8, 192, true, 768 * kGiB, "768 GiB", "", kTorchx},
      {"AWS g6e.48xlarge", 8, 192, true, 1536 * kGiB, "1536 GiB", "", kTorchx},
      {"AWS g6e.12xlarge", 4, 48, true, 384 * kGiB, "384 GiB", "", kTorchx},
      {"NVIDIA DGX B200", 8, 112, false, 2000 * kGB, "2 TB",
       "2x 1.92 TB NVMe M.2 (OS, RAID 1), 8x 3.84 TB NVMe U.2 (RAID 0)",
       "https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html (2x Xeon Platinum 8570, "
       "112 "
       "cores; 2 TB, upgradable to 4 TB)"},
      {"8x H200 SXM (NVIDIA, MLPerf Inference v4.1)", 8, 112, false, 2000 * kGB, "2 TB (32x 64GB)",
       "2 TB SSD",
       "https://raw.githubusercontent.com/mlcommons/inference_results_v4.1/main/closed/NVIDIA/systems/"
       "H200-SXM-141GBx8_TRT_MaxQ.json (2x Xeon Platinum 8480C, 56 cores each)"},
      {"8x B200 (Nebius, MLPerf Inference v6.0)", 8, 120, false, 1800 * kGB, "1.8 TB (32x 64GB)", "",
       "https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/main/closed/Nebius/systems/"
       "nebius_b200_n1.json (2x Xeon Platinum 8580, 60 cores each)"},
      {"GB200 NVL72 compute tray (Crusoe, MLPerf Inference v6.1)", 4, 144, false, 1870 * kGB,
       "1.87 TB LPDDR5x", "4 NVMe drives (RAID 0)",
       "https://raw.githubusercontent.com/mlcommons/inference_results_v6.1/main/closed/Crusoe/systems/"
       "GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json (2 Grace CPUs, 144 cores, per 4-GPU node)"},
  };
  return kServers;
}

WorkloadKind WorkloadOf(const Task& t) {
  if (t.workload) return *t.workload;
  return t.arch.family == Family::kVision ? WorkloadKind::kVision : WorkloadKind::kLlm;
}

HostNeed NeedFor(const Task& t, const Estimate& e, int per_server, int servers, double gpu_memory) {
  HostNeed n;
  n.workload = WorkloadOf(t);
  n.gpus = per_server;
  n.servers = servers;
  n.cpu_cores = CpuCoresFor(n.workload, per_server);
  n.cpu_formula = CpuFormula(n.workload, per_server) + " (" + RatioFor(n.workload).name + ": " +
                  std::to_string(RatioFor(n.workload).dataloader_workers) + " DataLoader workers per GPU)";
  n.ram_floor = gpu_memory * per_server;
  n.ram_offload = (e.host_per_gpu - e.host_embeddings_per_gpu) * per_server;
  if (!t.embedding_tables.empty()) {
    Task at = t;
    at.gpus = e.gpus;
    const EmbeddingPlacement p = PlaceEmbeddings(at);
    n.embeddings_formula = std::to_string(t.embedding_tables.size()) + " table(s), " + Gb(p.table) + " + " +
                           p.optimizer_name + " optimizer states " + Gb(p.optimizer) + " = " +
                           Gb(p.table + p.optimizer) + " in all";
    const bool row_wise = t.embedding_sharding == EmbeddingSharding::kRowWise;
    if (t.embedding_offload) {
      n.ram_embeddings = p.HostPerServer(per_server);
      n.embeddings_formula += row_wise ? ", in host RAM: " + std::to_string(per_server) + " GPUs x " +
                                             Gb(e.host_embeddings_per_gpu) + " per GPU's shard"
                                       : ", in host RAM: the tables of the heaviest server's " +
                                             std::to_string(per_server) + " GPUs, placed table-wise";
    } else {
      n.embeddings_formula +=
          row_wise ? ", sharded row-wise over the GPUs' memory" : ", placed table-wise on the GPUs";
      n.embeddings_formula += " (--embedding-offload puts them in host RAM)";
    }
  }
  const double P = static_cast<double>(e.params);
  if (t.method == Method::kFull) {
    const double w = t.precision == Precision::kFp32 ? 4 : 2, master = Mixed(t.precision) ? 4 : 0;
    const double states = StateBytes(t, t.precision == Precision::kBf16Pure ? 2 : 4);
    const double per = w + master + states;
    n.checkpoint = per * P;
    n.checkpoint_formula = "(" + Bytes(w) + " B weights + " + Bytes(master) + " B fp32 master + " +
                           Bytes(states) + " B optimizer states) = " + Bytes(per) + " B x " + Count(P) +
                           " parameters";
  } else {
    const double ab = t.c.lora_adapter_bytes, states = StateBytes(t, ab);
    const double T = static_cast<double>(e.trainable);
    n.checkpoint = (ab + states) * T;
    n.checkpoint_formula = "(" + Bytes(ab) + " B adapter weights + " + Bytes(states) +
                           " B optimizer states) x " + Count(T) + " adapter parameters";
  }
  n.base_weights = 2 * P;
  n.dataset = static_cast<double>(t.dataset_bytes);
  n.kept = t.checkpoints_kept;
  if (t.dataset_bytes == 0)
    n.notes.push_back(
        "the dataset is not counted: --dataset-size (storage.dataset in a Task document) adds it");
  return n;
}

}  // namespace gp::size
