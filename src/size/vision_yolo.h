// The Ultralytics detection networks' layer tables (YOLOv8, YOLO11) on the traced graph of vision_graph.h,
// each layer of the model's yaml a block (what checkpointing keeps the input of). Private to
// src/size/vision*.cc.
#pragma once
#include "size/vision_graph.h"

namespace gp::size::vision {

// A yaml's `scales` row: depth and width multiples and the channel cap.
struct YoloScale {
  double depth, width, max_ch;
};

void Yolov8(Graph& g, const Ten& img, const YoloScale& y);
// `c3k`: the m, l and x scales, whose every C3k2 block runs C3k (Ultralytics' parse_model sets it for them).
void Yolo11(Graph& g, const Ten& img, const YoloScale& y, bool c3k);

}  // namespace gp::size::vision
