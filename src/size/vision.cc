// The layer tables (vision.h): each network written out from its public definition, layer by layer, on
// the traced graph of vision_graph.h.
//   ResNet: pytorch/vision torchvision/models/resnet.py (BasicBlock, Bottleneck with the stride on the 3x3
//     convolution, ReLU in place).
//   ViT: pytorch/vision torchvision/models/vision_transformer.py (class token, EncoderBlock with
//     torch.nn.MultiheadAttention, MLPBlock with GELU; dropout 0).
//   ConvNeXt: pytorch/vision torchvision/models/convnext.py (CNBlock: 7x7 depthwise convolution, LayerNorm,
//     Linear 4x, GELU, Linear, layer scale, stochastic depth growing linearly to 0.1 / 0.5).
//   YOLOv8 and YOLO11: vision_yolo.cc.
#include "size/vision.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "size/vision_graph.h"
#include "size/vision_yolo.h"

namespace gp::size {
namespace {

using vision::Graph;
using vision::Ten;
using vision::Yolo11;
using vision::Yolov8;

constexpr const char* kResnetSrc = "pytorch/vision torchvision/models/resnet.py";
constexpr const char* kVitSrc = "pytorch/vision torchvision/models/vision_transformer.py";
constexpr const char* kConvnextSrc = "pytorch/vision torchvision/models/convnext.py";
constexpr const char* kYoloSrc =
    "ultralytics/ultralytics ultralytics/cfg/models/v8/yolov8.yaml with ultralytics/nn/modules/conv.py, "
    "block.py and head.py";
constexpr const char* kYolo11Src =
    "ultralytics/ultralytics ultralytics/cfg/models/11/yolo11.yaml at 0a2ae50b with "
    "ultralytics/nn/modules/block.py "
    "at 44cbec18 (C3k2, C3k, C2PSA), head.py at 9a604912 and tasks.py at 88f0cebc";

// ---- ResNet ----
Ten ConvBn(Graph& g, const Ten& x, double c, int k, int s) {
  return g.BatchNorm(g.Conv(x, c, k, s, k / 2, 1, false));
}

Ten Residual(Graph& g, const Ten& x, const Ten& out, double c, int s) {
  const Ten id = (s != 1 || x.c != c) ? ConvBn(g, x, c, 1, s) : x;
  (void)id;  // out += identity happens in place: nothing saved, the storage is out's
  return g.ReluInPlace(out);
}

Ten Basic(Graph& g, const Ten& x, double planes, int s) {
  Ten y = g.ReluInPlace(ConvBn(g, x, planes, 3, s));
  y = ConvBn(g, y, planes, 3, 1);
  return Residual(g, x, y, planes, s);
}

Ten Bottleneck(Graph& g, const Ten& x, double planes, int s) {
  Ten y = g.ReluInPlace(ConvBn(g, x, planes, 1, 1));
  y = g.ReluInPlace(ConvBn(g, y, planes, 3, s));
  y = ConvBn(g, y, planes * 4, 1, 1);
  return Residual(g, x, y, planes * 4, s);
}

void Resnet(Graph& g, const Ten& img, const std::vector<int>& layers, bool bottleneck) {
  Ten x = g.ReluInPlace(ConvBn(g, img, 64, 7, 2));
  x = g.MaxPool(x, 3, 2, 1);
  double planes = 64;
  for (size_t i = 0; i < layers.size(); ++i, planes *= 2)
    for (int b = 0; b < layers[i]; ++b) {
      const int s = (i > 0 && b == 0) ? 2 : 1;
      g.BeginBlock(x);
      x = bottleneck ? Bottleneck(g, x, planes, s) : Basic(g, x, planes, s);
      g.EndBlock();
    }
  x = g.AvgPoolAll(x);
  g.Linear(Ten{x.id, x.c, 1, 1, x.bytes}, 1000, true);
}

// ---- ViT ----
void Vit(Graph& g, const Ten& img, int layers, double d, int heads, double mlp) {
  const Ten p = g.Conv(img, d, 16, 16, 0, 1, true);
  const double tokens = p.h * p.w + 1;
  // torch.cat with the fp32 class token, then + the fp32 position embedding: fp32 either way.
  Ten x = g.Input(d, tokens, 1);
  g.AddParams(d + tokens * d);  // class token and position embedding
  for (int i = 0; i < layers; ++i) {
    g.BeginBlock(x);
    const Ten r = g.Add(g.Attention(g.LayerNorm(x), heads), x);
    x = g.Add(g.Linear(g.Gelu(g.Linear(g.LayerNorm(r), mlp, true)), d, true), r);
    g.EndBlock();
  }
  const Ten n = g.LayerNorm(x);
  g.Linear(n, 1000, true);  // on the class token, a view of the norm's output
}

// ---- ConvNeXt ----
Ten CnBlock(Graph& g, const Ten& x, double dim, double sd) {
  const Ten dw = g.Conv(x, dim, 7, 1, 3, dim, true);
  Ten t{dw.id, dim, dw.h * dw.w, 1, dw.bytes};  // permuted view: tokens x channels
  t = g.Linear(g.Gelu(g.Linear(g.LayerNorm(t), 4 * dim, true)), dim, true);
  Ten r = g.ScaleByParam(Ten{t.id, dim, x.h, x.w, t.bytes}, dim);
  if (sd > 0) {  // stochastic depth: input * noise saves the noise, one fp32 value per image
    g.SaveRaw(g.Images() * 4);
    r = g.Fresh(r, dim);
  }
  return r;  // result += input, in place
}

void Convnext(Graph& g, const Ten& img, const std::vector<std::pair<double, int>>& stages, double sd_max) {
  Ten x = g.Conv(img, stages[0].first, 4, 4, 0, 1, true);
  x = g.LayerNorm(Ten{x.id, x.c, x.h, x.w, x.bytes});
  int total = 0, id = 0;
  for (const auto& st : stages) total += st.second;
  for (size_t i = 0; i < stages.size(); ++i) {
    const double dim = stages[i].first;
    for (int b = 0; b < stages[i].second; ++b, ++id) {
      const double sd = sd_max * id / (total - 1.0);
      g.BeginBlock(x);
      x = CnBlock(g, x, dim, sd);
      g.EndBlock();
    }
    if (i + 1 < stages.size()) {
      const Ten n = g.LayerNorm(Ten{x.id, dim, x.h, x.w, x.bytes});
      x = g.Conv(n, stages[i + 1].first, 2, 2, 0, 1, true);
    }
  }
  const Ten p = g.AvgPoolAll(x);
  g.Linear(g.LayerNorm(p), 1000, true);
}

struct Net {
  const char* source;
  std::function<void(Graph&, const Ten&)> build;
};

VisionInput InputOf(const std::string& name) {
  if (name.rfind("yolo", 0) == 0) return {32, false, 640};
  if (name.rfind("vit", 0) == 0) return {16, true, 224};
  return {32, false, 224};
}

using NetTable = std::map<std::string, Net>;

// ResNet-18 to -152: basic blocks up to 34 layers, bottleneck blocks from 50.
void AddResnetNets(NetTable& nets) {
  nets.insert({
      {"resnet-18",
       {kResnetSrc,
        [](Graph& g, const Ten& i) {
          Resnet(g, i, {2, 2, 2, 2}, false);
        }}},
      {"resnet-34",
       {kResnetSrc,
        [](Graph& g, const Ten& i) {
          Resnet(g, i, {3, 4, 6, 3}, false);
        }}},
      {"resnet-50",
       {kResnetSrc,
        [](Graph& g, const Ten& i) {
          Resnet(g, i, {3, 4, 6, 3}, true);
        }}},
      {"resnet-101",
       {kResnetSrc,
        [](Graph& g, const Ten& i) {
          Resnet(g, i, {3, 4, 23, 3}, true);
        }}},
      {"resnet-152",
       {kResnetSrc,
        [](Graph& g, const Ten& i) {
          Resnet(g, i, {3, 8, 36, 3}, true);
        }}},
  });
}

// ViT-B/16 and ViT-L/16.
void AddVitNets(NetTable& nets) {
  nets.insert({
      {"vit-b-16", {kVitSrc, [](Graph& g, const Ten& i) { Vit(g, i, 12, 768, 12, 3072); }}},
      {"vit-l-16", {kVitSrc, [](Graph& g, const Ten& i) { Vit(g, i, 24, 1024, 16, 4096); }}},
  });
}

// ConvNeXt tiny and base.
void AddConvnextNets(NetTable& nets) {
  nets.insert({
      {"convnext-tiny",
       {kConvnextSrc,
        [](Graph& g, const Ten& i) {
          Convnext(g, i, {{96, 3}, {192, 3}, {384, 9}, {768, 3}}, 0.1);
        }}},
      {"convnext-base",
       {kConvnextSrc,
        [](Graph& g, const Ten& i) {
          Convnext(g, i, {{128, 3}, {256, 3}, {512, 27}, {1024, 3}}, 0.5);
        }}},
  });
}

// YOLOv8 n to x: depth and width multiples and the largest channel count.
void AddYolov8Nets(NetTable& nets) {
  nets.insert({
      {"yolov8n",
       {kYoloSrc,
        [](Graph& g, const Ten& i) {
          Yolov8(g, i, {0.33, 0.25, 1024});
        }}},
      {"yolov8s",
       {kYoloSrc,
        [](Graph& g, const Ten& i) {
          Yolov8(g, i, {0.33, 0.50, 1024});
        }}},
      {"yolov8m",
       {kYoloSrc,
        [](Graph& g, const Ten& i) {
          Yolov8(g, i, {0.67, 0.75, 768});
        }}},
      {"yolov8l",
       {kYoloSrc,
        [](Graph& g, const Ten& i) {
          Yolov8(g, i, {1.00, 1.00, 512});
        }}},
      {"yolov8x",
       {kYoloSrc,
        [](Graph& g, const Ten& i) {
          Yolov8(g, i, {1.00, 1.25, 512});
        }}},
  });
}

// YOLO11 n to x: depth and width multiples, the largest channel count, and whether C3k2 uses C3k.
void AddYolo11Nets(NetTable& nets) {
  nets.insert({
      {"yolo11n",
       {kYolo11Src,
        [](Graph& g, const Ten& i) {
          Yolo11(g, i, {0.50, 0.25, 1024}, false);
        }}},
      {"yolo11s",
       {kYolo11Src,
        [](Graph& g, const Ten& i) {
          Yolo11(g, i, {0.50, 0.50, 1024}, false);
        }}},
      {"yolo11m",
       {kYolo11Src,
        [](Graph& g, const Ten& i) {
          Yolo11(g, i, {0.50, 1.00, 512}, true);
        }}},
      {"yolo11l",
       {kYolo11Src,
        [](Graph& g, const Ten& i) {
          Yolo11(g, i, {1.00, 1.00, 512}, true);
        }}},
      {"yolo11x",
       {kYolo11Src,
        [](Graph& g, const Ten& i) {
          Yolo11(g, i, {1.00, 1.50, 512}, true);
        }}},
  });
}

// Every network, by name.
const NetTable& Nets() {
  static const NetTable nets = [] {
    NetTable t;
    AddResnetNets(t);
    AddVitNets(t);
    AddConvnextNets(t);
    AddYolov8Nets(t);
    AddYolo11Nets(t);
    return t;
  }();
  return nets;
}

}  // namespace

VisionInput VisionInputOf(const std::string& name) {
  return Nets().count(name) > 0 ? InputOf(name) : VisionInput{};
}

VisionCount CountVision(const std::string& name, int height, int width, int images, Amp amp,
                        bool fused_attention) {
  const auto it = Nets().find(name);
  if (it == Nets().end()) return {};
  Graph g(images, amp, fused_attention);
  it->second.build(g, g.Input(3, height, width));
  VisionCount r = g.Result();
  r.source = it->second.source;
  return r;
}

}  // namespace gp::size
