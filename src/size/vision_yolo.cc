// YOLOv8 and YOLO11 layer by layer (vision_yolo.h), from Ultralytics' public definitions:
//   YOLOv8: ultralytics/ultralytics ultralytics/cfg/models/v8/yolov8.yaml (backbone and head, scales n..x)
//     with ultralytics/nn/modules/conv.py (Conv: convolution, BatchNorm, SiLU), block.py (C2f, Bottleneck,
//     SPPF) and head.py (Detect: two 3x3 Conv and a 1x1 convolution per branch and level).
//   YOLO11: ultralytics/ultralytics ultralytics/cfg/models/11/yolo11.yaml at 0a2ae50b (scales n..x) with
//     block.py at 44cbec18 (C3k2: C2f whose blocks are Bottleneck with e=0.5, or C3k with two e=1.0
//     Bottlenecks; C2PSA: PSABlock = Attention (qkv, pe and proj Conv without activation) + a two-Conv
//     feed-forward, both residual), head.py at 9a604912 (Detect: the class branch with depthwise 3x3 Conv
//     before each 1x1 Conv) and tasks.py at 88f0cebc (parse_model: C3k2 runs C3k at the m, l and x scales).
#include "size/vision_yolo.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gp::size::vision {
namespace {

double Ch(const YoloScale& y, double c) { return std::ceil(std::min(c, y.max_ch) * y.width / 8) * 8; }
int Rep(const YoloScale& y, int n) {
  return n > 1 ? std::max(static_cast<int>(std::lround(n * y.depth)), 1) : n;
}

Ten YConv(Graph& g, const Ten& x, double c, int k, int s, double groups = 1) {
  return g.Silu(g.BatchNorm(g.Conv(x, c, k, s, k / 2, groups, false)));
}
Ten YConvLinear(Graph& g, const Ten& x, double c, int k, double groups = 1) {  // act=False
  return g.BatchNorm(g.Conv(x, c, k, 1, k / 2, groups, false));
}

// Bottleneck(c, c, shortcut, k=3, e): two Conv; the residual add saves nothing.
Ten Bottleneck(Graph& g, const Ten& x, double e, bool shortcut) {
  const double c = x.c;
  const Ten b = YConv(g, YConv(g, x, std::floor(c * e), 3, 1), c, 3, 1);
  return shortcut ? g.Fresh(b, c) : b;
}

// C2f (YOLOv8) and C3k2 (YOLO11) share the frame: cv1 to 2c, chunk, n blocks on the last chunk, concat, cv2.
template <typename Block>
Ten SplitConcat(Graph& g, const Ten& x, double c2, int n, double e, Block block) {
  const double c = std::floor(c2 * e);
  const Ten y = YConv(g, x, 2 * c, 1, 1);
  Ten last{y.id, c, y.h, y.w, y.bytes};  // chunk: a view of cv1's output
  for (int i = 0; i < n; ++i) last = block(last);
  return YConv(g, g.Fresh(y, (2 + n) * c), c2, 1, 1);
}

Ten C2f(Graph& g, const Ten& x, double c2, int n, bool shortcut) {
  return SplitConcat(g, x, c2, n, 0.5, [&](const Ten& t) { return Bottleneck(g, t, 1.0, shortcut); });
}

// C3k: C3 with two e=1.0 Bottlenecks on half the channels: cv1 and cv2 to c/2, concat, cv3.
Ten C3k(Graph& g, const Ten& x) {
  const double c = std::floor(x.c * 0.5);
  Ten m = YConv(g, x, c, 1, 1);
  for (int i = 0; i < 2; ++i) m = Bottleneck(g, m, 1.0, true);
  const Ten b = YConv(g, x, c, 1, 1);
  (void)b;
  return YConv(g, g.Fresh(m, 2 * c), x.c, 1, 1);
}

Ten C3k2(Graph& g, const Ten& x, double c2, int n, bool c3k, double e) {
  return SplitConcat(g, x, c2, n, e,
                     [&](const Ten& t) { return c3k ? C3k(g, t) : Bottleneck(g, t, 0.5, true); });
}

Ten Sppf(Graph& g, const Ten& x, double c2) {
  const double c = std::floor(x.c / 2);
  Ten y = YConv(g, x, c, 1, 1);
  for (int i = 0; i < 3; ++i) y = g.MaxPool(y, 5, 1, 2);
  return YConv(g, g.Fresh(y, 4 * c), c2, 1, 1);
}

// PSABlock(c, attn_ratio 0.5, heads c/64): x + Attention(x), then x + ffn(x).
Ten PsaBlock(Graph& g, const Ten& x) {
  const double c = x.c;
  const int heads = static_cast<int>(c / 64);
  const double head_dim = std::floor(c / heads), key_dim = std::floor(head_dim * 0.5);
  const Ten qkv = YConvLinear(g, x, c + 2 * key_dim * heads, 1);
  const Ten prod = g.PixelAttention(qkv, heads, head_dim);
  const Ten pe = YConvLinear(g, g.Fresh(qkv, c), c, 3, c);  // v.reshape copies the strided view
  const Ten attn = YConvLinear(g, g.Add(prod, pe), c, 1);
  const Ten r = g.Add(x, attn);
  return g.Add(r, YConvLinear(g, YConv(g, r, 2 * c, 1, 1), c, 1));
}

Ten C2psa(Graph& g, const Ten& x, int n) {
  const double c = std::floor(x.c * 0.5);
  const Ten y = YConv(g, x, 2 * c, 1, 1);
  Ten b{y.id, c, y.h, y.w, y.bytes};  // split: a view
  for (int i = 0; i < n; ++i) b = PsaBlock(g, b);
  return YConv(g, g.Fresh(y, 2 * c), x.c, 1, 1);
}

// Detect: per level a box branch (two 3x3 Conv, a 1x1 convolution to 4 x 16 distribution bins) and a class
// branch (YOLOv8: two 3x3 Conv; YOLO11: depthwise 3x3 + 1x1 Conv, twice), then the loss
// (ultralytics/utils/loss.py v8DetectionLoss: the class scores in fp32 for binary_cross_entropy_with_logits,
// the box distributions' softmax in fp32 for the decode).
void Detect(Graph& g, const std::vector<Ten>& feats, bool depthwise_cls) {
  const double nc = 80, reg = 16;
  const double c2 = std::max({16.0, std::floor(feats[0].c / 4), reg * 4});
  const double c3 = std::max(feats[0].c, std::min(nc, 100.0));
  double anchors = 0;
  for (const Ten& f : feats) {
    g.Conv(YConv(g, YConv(g, f, c2, 3, 1), c2, 3, 1), 4 * reg, 1, 1, 0, 1, true);
    Ten cls = f;
    if (depthwise_cls) {
      cls = YConv(g, YConv(g, cls, cls.c, 3, 1, cls.c), c3, 1, 1);
      cls = YConv(g, YConv(g, cls, c3, 3, 1, c3), c3, 1, 1);
    } else {
      cls = YConv(g, YConv(g, cls, c3, 3, 1), c3, 3, 1);
    }
    g.Conv(cls, nc, 1, 1, 0, 1, true);
    anchors += f.h * f.w;
  }
  g.AddParams(reg);  // the DFL convolution: 16 fixed weights, no gradient
  g.SaveRaw(g.Images() * anchors * (nc * 4 + 4 * reg * 4));
}

template <typename F>
Ten Layer(Graph& g, const Ten& in, F f) {
  g.BeginBlock(in);
  const Ten out = f(in);
  g.EndBlock();
  return out;
}

}  // namespace

void Yolov8(Graph& g, const Ten& img, const YoloScale& y) {
  auto conv = [&](double c) { return [&g, &y, c](const Ten& in) { return YConv(g, in, Ch(y, c), 3, 2); }; };
  auto c2f = [&](double c, int n, bool sc) {
    return [&g, &y, c, n, sc](const Ten& in) { return C2f(g, in, Ch(y, c), Rep(y, n), sc); };
  };
  Ten x = Layer(g, img, conv(64));
  x = Layer(g, x, conv(128));
  x = Layer(g, x, c2f(128, 3, true));
  x = Layer(g, x, conv(256));
  const Ten p3 = Layer(g, x, c2f(256, 6, true));
  x = Layer(g, p3, conv(512));
  const Ten p4 = Layer(g, x, c2f(512, 6, true));
  x = Layer(g, p4, conv(1024));
  x = Layer(g, x, c2f(1024, 3, true));
  const Ten p5 = Layer(g, x, [&](const Ten& in) { return Sppf(g, in, Ch(y, 1024)); });
  x = g.Upsample(p5, 2);
  const Ten h12 = Layer(g, g.Fresh(x, x.c + p4.c), c2f(512, 3, false));
  x = g.Upsample(h12, 2);
  const Ten h15 = Layer(g, g.Fresh(x, x.c + p3.c), c2f(256, 3, false));
  x = Layer(g, h15, conv(256));
  const Ten h18 = Layer(g, g.Fresh(x, x.c + h12.c), c2f(512, 3, false));
  x = Layer(g, h18, conv(512));
  const Ten h21 = Layer(g, g.Fresh(x, x.c + p5.c), c2f(1024, 3, false));
  Detect(g, {h15, h18, h21}, false);
}

void Yolo11(Graph& g, const Ten& img, const YoloScale& y, bool c3k) {
  auto conv = [&](double c) { return [&g, &y, c](const Ten& in) { return YConv(g, in, Ch(y, c), 3, 2); }; };
  auto c3k2 = [&](double c, bool k, double e = 0.5) {
    return [&g, &y, c, k, e](const Ten& in) { return C3k2(g, in, Ch(y, c), Rep(y, 2), k, e); };
  };
  Ten x = Layer(g, img, conv(64));
  x = Layer(g, x, conv(128));
  x = Layer(g, x, c3k2(256, c3k, 0.25));
  x = Layer(g, x, conv(256));
  const Ten p3 = Layer(g, x, c3k2(512, c3k, 0.25));
  x = Layer(g, p3, conv(512));
  const Ten p4 = Layer(g, x, c3k2(512, true));
  x = Layer(g, p4, conv(1024));
  x = Layer(g, x, c3k2(1024, true));
  x = Layer(g, x, [&](const Ten& in) { return Sppf(g, in, Ch(y, 1024)); });
  const Ten p5 = Layer(g, x, [&](const Ten& in) { return C2psa(g, in, Rep(y, 2)); });
  x = g.Upsample(p5, 2);
  const Ten h13 = Layer(g, g.Fresh(x, x.c + p4.c), c3k2(512, c3k));
  x = g.Upsample(h13, 2);
  const Ten h16 = Layer(g, g.Fresh(x, x.c + p3.c), c3k2(256, c3k));
  x = Layer(g, h16, conv(256));
  const Ten h19 = Layer(g, g.Fresh(x, x.c + h13.c), c3k2(512, c3k));
  x = Layer(g, h19, conv(512));
  const Ten h22 = Layer(g, g.Fresh(x, x.c + p5.c), c3k2(1024, true));
  Detect(g, {h16, h19, h22}, true);
}

}  // namespace gp::size::vision
