// DescribeLink (recommend.h): what a layout moves between GPUs per optimizer step, over which link, and
// the findings a reader should see. Volumes per GPU, ring collectives (each GPU sends about the whole
// buffer once per collective), as stas00/ml-engineering training/model-parallelism/README.md counts them:
// DDP and ZeRO-1/2 all-reduce the gradients (2 x their bytes); ZeRO-3 / FSDP FULL_SHARD all-gather the
// weights twice (forward and backward) and reduce-scatter the gradients ("a 10B param model in bf16
// under ZeRO-3 will need to send 10*2*3 = 60GB"), once per micro-batch.
#include <cstdio>

#include "size/format.h"
#include "size/recommend.h"

namespace gp::size {
namespace {

// Per GPU across servers, the reference for "what network that implies": one 400 Gb/s ConnectX-7 per GPU,
// as 8-GPU B200 servers ship (NVIDIA DGX B200 specifications: "8x single-port NVIDIA ConnectX-7 VPI, up to
// 400Gb/s InfiniBand/Ethernet", copied in eawlot3000/reading nvidia/DGX-B200.md; MLCommons system
// description https://raw.githubusercontent.com/mlcommons/inference_results_v6.0/main/closed/Nebius/systems/
// nebius_b200_n1.json: "8x ConnectX-7 IB NDR 400Gb/s"). comms_time = bytes / throughput
// (stas00/ml-engineering training/model-parallelism/README.md).
constexpr double kNetworkBytesPerSecond = 400e9 / 8;

bool FullShard(Strategy s) {
  return s == Strategy::kZero3 || s == Strategy::kFsdp || s == Strategy::kFsdpHybrid;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.2f s" : "%.0f s", s);
  return buf;
}

std::string Times(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fx", x);
  return buf;
}

}  // namespace

void DescribeLink(const Task& t, const Board& board, int domain, Option& o) {
  o.flags.clear();
  o.traffic = {};
  if (o.gpus <= 1) {
    o.link = "-";
    return;
  }
  const Estimate& e = o.at;
  const double P = static_cast<double>(e.params_per_gpu), T = e.trainable_per_gpu;
  const double w = e.gather_bytes, g = e.grad_bytes;
  const int dp = o.gpus / o.tp, micro = t.grad_accumulation;
  Traffic& tr = o.traffic;
  if (dp > 1 && FullShard(o.strategy)) {
    tr.bytes = micro * (2 * w * P + g * T);
    tr.formula = (micro > 1 ? std::to_string(micro) + " micro-batches x " : std::string()) +
                 "(2 all-gathers x " + Bytes(w) + " B x " + Count(P) + " weights + a reduce-scatter of " +
                 Bytes(g) + " B x " + Count(T) + " gradients)";
  } else if (dp > 1) {
    tr.bytes = 2 * g * T;
    tr.formula = "an all-reduce of " + Bytes(g) + " B x " + Count(T) + " gradients (2x their bytes)";
  }
  const bool in_domain = domain >= o.gpus;            // every GPU of the job on one NVLink domain
  const bool server_nvlink = domain >= o.per_server;  // the GPUs of a server share NVLink
  if (o.servers > 1 && !in_domain && dp > 1) {
    if (o.strategy == Strategy::kFsdpHybrid) {
      tr.network_bytes = 2 * g * T / o.per_server;
      tr.formula += "; across servers only the all-reduce of each shard's gradients, 2 x " + Bytes(g) +
                    " B x " + Count(T) + " / " + std::to_string(o.per_server);
    } else {
      tr.network_bytes = tr.bytes;
    }
  }
  std::string inside = server_nvlink       ? (board.nvlink > board.LargestServer()
                                                  ? "NVLink (NVL" + std::to_string(board.nvlink) + ")"
                                                  : "NVLink")
                       : board.p2p == "no" ? "PCIe, no peer-to-peer"
                                           : "PCIe";
  if (o.per_server == 1 && !in_domain) inside.clear();  // one GPU per server: nothing inside it to cross
  o.link = o.servers > 1 && !in_domain ? (inside.empty() ? "network" : inside + " + network") : inside;

  if (o.tp > 1)
    o.flags.push_back("tensor parallel " + std::to_string(o.tp) + " inside the NVLink domain (" +
                      std::to_string(domain) +
                      " GPUs): it all-reduces activations in every layer, so it stays "
                      "off PCIe and the network");
  if (!server_nvlink && FullShard(o.strategy) && dp > 1)
    o.flags.push_back(std::string(Name(o.strategy)) + " across PCIe-only GPUs moves " + Gb(tr.bytes) +
                      " per GPU per step (" + tr.formula + ", " + Times(tr.bytes / (w * P)) +
                      " the model's weights): without NVLink the step waits on PCIe");
  if (tr.network_bytes > 0)
    o.flags.push_back(
        "across " + std::to_string(o.servers) + " servers: " + Gb(tr.network_bytes) +
        " per GPU per step over the network; at 400 Gb/s per GPU (one ConnectX-7 per GPU, as DGX "
        "B200 servers ship) that is " +
        Seconds(tr.network_bytes / kNetworkBytesPerSecond) + " of communication per step");
  if (board.p2p == "no")
    o.flags.push_back(board.name +
                      " has no peer-to-peer between cards: NCCL goes through host memory "
                      "(NCCL_P2P_DISABLE=1, as accelerate sets for these cards)");
}

}  // namespace gp::size
