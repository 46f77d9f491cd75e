// The vision layer tables (src/size/vision.h) against what PyTorch counts: tests/size/vision_saved.tsv holds
// the bytes torchvision's networks save for backward, counted by tests/differential/saved_tensors.py with
// torch.autograd.graph.saved_tensors_hooks (Debian's torch 1.13, torchvision 0.14, CPU). Each network's
// tolerance is stated here, before the comparison; the parameter count of every vision row of the model
// table is the count its publisher gives, exactly.
#include "size/vision.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "size/estimate.h"
#include "size/model.h"
#include "size/task_args.h"

using gp::size::Amp;
using gp::size::CountVision;

namespace {

// Largest relative error allowed between the layer table's saved bytes and PyTorch's count, per network.
// ResNet: every saved tensor is a convolution, batch-norm or ReLU storage whose size the table knows exactly.
// ViT and ConvNeXt: attention and LayerNorm internals (statistics, views kept by matmul) are counted by rule,
// so they get 2%.
const std::map<std::string, double> kSavedTolerance = {
    {"resnet-18", 0.005}, {"resnet-50", 0.005}, {"resnet-101", 0.005},   {"resnet-152", 0.005},
    {"vit-b-16", 0.02},   {"vit-l-16", 0.02},   {"convnext-tiny", 0.02}, {"convnext-base", 0.02},
};

struct SavedRow {
  std::string model, precision;
  int size = 0, batch = 0;
  double saved = 0, casts = 0;
  uint64_t params = 0;
};

std::vector<SavedRow> SavedRows(const char* file = "vision_saved.tsv") {
  std::ifstream in(std::string(GP_SOURCE_DIR) + "/tests/size/" + file);
  std::vector<SavedRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    SavedRow r;
    f >> r.model >> r.size >> r.batch >> r.precision >> r.saved >> r.casts >> r.params;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("vision: the layer tables save what PyTorch saves, within each network's tolerance",
          "[size][vision]") {
  const auto rows = SavedRows();
  // 8 networks x 2 sizes and batches in fp32; under CPU autocast all but ConvNeXt (whose LayerNorm2d does not
  // run under CPU autocast in torch 1.13; see the script).
  REQUIRE(rows.size() == 28);
  for (const SavedRow& r : rows) {
    INFO(r.model << " " << r.size << "px x " << r.batch << " " << r.precision);
    REQUIRE(kSavedTolerance.count(r.model) == 1);
    const Amp amp = r.precision == "fp32" ? Amp::kNone : Amp::kCpu;
    const auto v = CountVision(r.model, r.size, r.size, r.batch, amp);
    REQUIRE(v.known);
    const double err = (v.saved - r.saved) / r.saved;
    INFO("table " << v.saved << " B, PyTorch " << r.saved << " B, error " << err * 100 << "%");
    CHECK(std::abs(err) <= kSavedTolerance.at(r.model));
    CHECK(v.weight_casts == Approx(r.casts).epsilon(0.001));
    CHECK(v.params == r.params);
  }
}

// The same counts made on a real H200 with PyTorch 2.11 (tests/size/vision_saved_cuda.tsv,
// saved_tensors.py --device cuda): CUDA's autocast lists, and ViT's attention in the fused kernel.
TEST_CASE("vision: the layer tables save what PyTorch 2 saves on a GPU, within each network's tolerance",
          "[size][vision]") {
  const auto rows = SavedRows("vision_saved_cuda.tsv");
  REQUIRE(rows.size() == 32);  // 8 networks x 2 sizes and batches x fp32 and bf16 autocast
  for (const SavedRow& r : rows) {
    INFO(r.model << " " << r.size << "px x " << r.batch << " " << r.precision << " on a GPU");
    const Amp amp = r.precision == "fp32" ? Amp::kNone : Amp::kCuda;
    const auto v = CountVision(r.model, r.size, r.size, r.batch, amp, /*fused_attention=*/true);
    REQUIRE(v.known);
    const double err = (v.saved - r.saved) / r.saved;
    INFO("table " << v.saved << " B, PyTorch " << r.saved << " B, error " << err * 100 << "%");
    // ViT under bf16 autocast with more than one image: PyTorch keeps 5.7-5.9% less than the table counts
    // (the flash kernel's path; not yet explained), so the estimate errs high there, by at most 7%.
    const bool vit_flash_batch = r.model.rfind("vit-", 0) == 0 && amp == Amp::kCuda && r.batch > 1;
    CHECK(std::abs(err) <= (vit_flash_batch ? 0.07 : kSavedTolerance.at(r.model)));
    if (vit_flash_batch) CHECK(err > 0);
    CHECK(v.weight_casts == Approx(r.casts).epsilon(0.001));
    CHECK(v.params == r.params);
  }
}

TEST_CASE("vision: every vision row's layer table reproduces its published parameter count",
          "[size][vision]") {
  int checked = 0;
  for (const auto& a : gp::size::ModelTable()) {
    if (a.family != gp::size::Family::kVision) continue;
    INFO(a.name << " (" << a.published_source << ")");
    const auto v = CountVision(a.name, 224, 224, 1, Amp::kNone);
    REQUIRE(v.known);
    CHECK(v.params == a.published_params);
    CHECK(a.published_precision == 1);
    ++checked;
  }
  CHECK(checked == 18);
}

TEST_CASE("vision: saved bytes grow with the images and the pixels; checkpointing keeps less",
          "[size][vision]") {
  const auto one = CountVision("yolov8x", 640, 640, 1, Amp::kCuda);
  const auto sixteen = CountVision("yolov8x", 640, 640, 16, Amp::kCuda);
  CHECK(sixteen.saved == Approx(16 * one.saved).epsilon(0.001));
  CHECK(sixteen.weight_casts == one.weight_casts);  // per step, not per image
  const auto big = CountVision("yolov8x", 1280, 1280, 1, Amp::kCuda);
  CHECK(big.saved == Approx(4 * one.saved).epsilon(0.01));
  const auto fp32 = CountVision("yolov8x", 640, 640, 1, Amp::kNone);
  CHECK(fp32.saved > 1.9 * one.saved);  // 16-bit activations under autocast, int64 pooling indices either way
  CHECK(one.block_inputs + one.largest_block < one.block_saved);
  CHECK_FALSE(CountVision("llama-2-7b", 640, 640, 1, Amp::kNone).known);
}

// YOLOv8 n to x trained by MMYOLO on COCO: open-mmlab/mmyolo configs/yolov8/README.md@b708d5be, the rows
// without Mask Refine: 640 pixels, AMP, SyncBN, 8x A100 with 16 images per GPU (yolov8_*_syncbn_fast_8xb16-
// 500e_coco.py: SGD with momentum), "Mem (GB)" 2.8 / 4.0 / 7.2 / 9.8 / 12.2. mmengine logs the peak of
// torch.cuda.max_memory_allocated in MiB (mmengine/runner/log_processor.py, _get_max_memory); the README's
// GB is read as GiB. Allocated memory, so it is held against the allocated subtotal. Tolerance, per network:
// never more than 10% over; l and x at most 20% under; n, s and m at most 50% under, because the label
// assigner's transient tensors (images x ground-truth boxes x anchors, which do not grow with the network)
// and the EMA copy of the weights are not counted and weigh most on the small networks.
namespace {
struct YoloPeak {
  const char* model;
  double gib;
  double under;
};
const YoloPeak kMmyolo[] = {
    {"yolov8n", 2.8, 0.50}, {"yolov8s", 4.0, 0.50},  {"yolov8m", 7.2, 0.50},
    {"yolov8l", 9.8, 0.20}, {"yolov8x", 12.2, 0.20},
};
}  // namespace

TEST_CASE("vision: YOLOv8 against MMYOLO's published peak allocated memory", "[size][vision]") {
  for (const auto& m : kMmyolo) {
    const auto t = gp::test::TaskFromArgs(std::string("--model ") + m.model +
                                          " --image-size 640 --batch 128 --gpus 8 --precision fp16-mixed "
                                          "--optimizer sgd-momentum");
    const auto e = gp::size::EstimateTask(t);
    const double published = m.gib * 1073741824.0;
    const double err = e.allocated / published - 1;
    INFO(m.model << ": allocated " << e.allocated / 1073741824.0 << " GiB, published " << m.gib
                 << " GiB, error " << err * 100 << "%");
    CHECK(err <= 0.10);
    CHECK(err >= -m.under);
  }
}
