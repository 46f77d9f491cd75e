#!/usr/bin/env python3
"""Counts the bytes PyTorch keeps for the backward pass of torchvision's image classifiers.

One forward pass per model, resolution, batch and precision, under torch.autograd.graph.saved_tensors_hooks:
the pack hook sees every tensor autograd saves for backward. Each distinct storage is counted once (a ReLU
done in place and the convolution after it save the same storage), parameters and buffers are left out
(gpuprep counts them as the model's state), and the per-step low-precision copies autocast makes of the parameters are counted apart
(`weight_casts`). What is left is the activation memory held at the start of the backward pass.

Usage: saved_tensors.py [--models a,b] [--device cpu|cuda]. Prints one tab-separated row per case:
  model  image  batch  precision  saved_bytes  weight_cast_bytes  params
`precision` is fp32, or bf16-autocast (torch.autocast("cpu", dtype=torch.bfloat16)); with --device cuda,
fp32 and bf16-cuda-autocast (torch.autocast("cuda", dtype=torch.bfloat16)), where PyTorch 2's fused
attention kernels run. The first line names the
torch and torchvision versions; the counts are exact integers, so two runs of the same versions agree.
"""
import argparse
import sys

import torch
import torchvision

MODELS = {
    "resnet-18": lambda size: torchvision.models.resnet18(),
    "resnet-50": lambda size: torchvision.models.resnet50(),
    "resnet-101": lambda size: torchvision.models.resnet101(),
    "resnet-152": lambda size: torchvision.models.resnet152(),
    "vit-b-16": lambda size: torchvision.models.vit_b_16(image_size=size),
    "vit-l-16": lambda size: torchvision.models.vit_l_16(image_size=size),
    "convnext-tiny": lambda size: torchvision.models.convnext_tiny(),
    "convnext-base": lambda size: torchvision.models.convnext_base(),
}
# Two resolutions and batches; every size divides by 32 (ConvNeXt's and ResNet's strides, ViT's patch 16).
CASES = [(224, 2), (320, 1)]
PRECISIONS = ["fp32", "bf16-autocast"]
# ConvNeXt does not run under CPU autocast in torch 1.13: its LayerNorm2d calls F.layer_norm on the bf16
# output of a convolution with fp32 weights ("expected scalar type BFloat16 but found Float"), since CPU
# autocast has no fp32 rule for layer_norm. It is counted in fp32 only.
FP32_ONLY = {"convnext-tiny", "convnext-base"}


VIEWS = {"TBackward0", "TransposeBackward0", "PermuteBackward0", "ViewBackward0", "ExpandBackward0"}


def is_weight_cast(t, params):
    """A low-precision copy autocast made of a parameter: ToCopyBackward0 from a leaf's AccumulateGrad,
    possibly seen through a view (linear saves the transposed weight)."""
    fn = t.grad_fn
    while fn is not None and type(fn).__name__ in VIEWS and fn.next_functions:
        fn = fn.next_functions[0][0]
    if fn is None or type(fn).__name__ != "ToCopyBackward0":
        return False
    nxt = fn.next_functions[0][0] if fn.next_functions else None
    return nxt is not None and hasattr(nxt, "variable") and id(nxt.variable) in params


def count(model, size, batch, precision, device):
    params = {id(p) for p in model.parameters()}
    # Parameters and buffers (BatchNorm's running statistics, which batch_norm saves) are the model's
    # own state, counted by gpuprep apart from the activations.
    param_ptrs = {p.data_ptr() for p in model.parameters()} | {b.data_ptr() for b in model.buffers()}
    seen, casts = {}, {}

    def pack(t):
        st = t.storage()
        key = st.data_ptr()
        if key in param_ptrs:
            return t
        target = casts if is_weight_cast(t, params) else seen
        target[key] = st.nbytes()
        return t

    x = torch.randn(batch, 3, size, size, device=device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if precision == "fp32":
            out = model(x)
        else:
            with torch.autocast(device, dtype=torch.bfloat16):
                out = model(x)
    del out
    # A storage both saved as an activation and as a cast is an activation.
    cast_bytes = sum(v for k, v in casts.items() if k not in seen)
    return sum(seen.values()), cast_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    header = f"# torch {torch.__version__} torchvision {torchvision.__version__}"
    print(header + (f" on {torch.cuda.get_device_name(0)}" if args.device == "cuda" else ""))
    for name in args.models.split(","):
        for size, batch in CASES:
            model = MODELS[name](size).to(args.device)
            model.train()
            nparams = sum(p.numel() for p in model.parameters())
            for precision in PRECISIONS:
                if precision != "fp32" and name in FP32_ONLY and args.device == "cpu":
                    continue
                saved, casts = count(model, size, batch, precision, args.device)
                label = "bf16-cuda-autocast" if precision != "fp32" and args.device == "cuda" else precision
                print(f"{name}\t{size}\t{batch}\t{label}\t{saved}\t{casts}\t{nparams}", flush=True)
            del model
    return 0


if __name__ == "__main__":
    sys.exit(main())
