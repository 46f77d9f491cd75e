#include "size/task.h"

namespace gp::size {

const char* Name(Method m) {
  switch (m) {
    case Method::kFull:
      return "full";
    case Method::kLora:
      return "lora";
    case Method::kQlora:
      return "qlora";
  }
  return "?";
}

const char* Name(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16Mixed:
      return "bf16-mixed";
    case Precision::kFp16Mixed:
      return "fp16-mixed";
    case Precision::kBf16Pure:
      return "bf16-pure";
    case Precision::kFp8:
      return "fp8";
  }
  return "?";
}

const char* Name(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kAdamW8bit:
      return "adamw-8bit";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kSgdMomentum:
      return "sgd-momentum";
  }
  return "?";
}

const char* Name(Offload o) {
  switch (o) {
    case Offload::kNone:
      return "none";
    case Offload::kOptimizer:
      return "optimizer";
    case Offload::kParams:
      return "params";
  }
  return "?";
}

const char* Name(Strategy s) {
  switch (s) {
    case Strategy::kDdp:
      return "ddp";
    case Strategy::kZero1:
      return "zero1";
    case Strategy::kZero2:
      return "zero2";
    case Strategy::kZero3:
      return "zero3";
    case Strategy::kFsdp:
      return "fsdp";
    case Strategy::kFsdpGradOp:
      return "fsdp-grad-op";
    case Strategy::kFsdpHybrid:
      return "fsdp-hybrid";
  }
  return "?";
}

const char* Name(Checkpointing c) {
  switch (c) {
    case Checkpointing::kNone:
      return "none";
    case Checkpointing::kSelective:
      return "selective";
    case Checkpointing::kFull:
      return "full";
  }
  return "?";
}

const char* Name(LossPrecision l) { return l == LossPrecision::kFp32 ? "fp32" : "16bit"; }

const char* Name(EmbeddingOptimizer o) {
  switch (o) {
    case EmbeddingOptimizer::kAdam:
      return "adam";
    case EmbeddingOptimizer::kRowWiseAdagrad:
      return "rowwise-adagrad";
    case EmbeddingOptimizer::kSgd:
      return "sgd";
    case EmbeddingOptimizer::kOneState:
      return "one-state";
  }
  return "one-state";
}

const char* Name(EmbeddingSharding s) { return s == EmbeddingSharding::kRowWise ? "row" : "table"; }

bool IsDeepSpeed(Strategy s) {
  return s == Strategy::kZero1 || s == Strategy::kZero2 || s == Strategy::kZero3;
}

bool IsFsdp(Strategy s) {
  return s == Strategy::kFsdp || s == Strategy::kFsdpGradOp || s == Strategy::kFsdpHybrid;
}

LossPrecision LossPrecisionOf(const Task& t) {
  if (t.loss_precision) return *t.loss_precision;
  if (t.precision == Precision::kFp32) return LossPrecision::kFp32;
  if (t.compile) return LossPrecision::k16bit;
  if (IsDeepSpeed(t.strategy) && t.precision == Precision::kFp16Mixed) return LossPrecision::k16bit;
  return LossPrecision::kFp32;
}

}  // namespace gp::size
