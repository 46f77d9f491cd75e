# Measures the peak of torch.cuda.max_memory_allocated() over a few training steps of models built from
# their configurations (nothing is downloaded), to hold `gpuprep size` against. Writes one JSON object per
# case on stdout, with the configuration saved beside it as CASE.config.json in the folder given.
# Usage: python3 size_peak.py DIR
import json
import os
import sys
import time

import torch

out_dir = sys.argv[1]
dev = torch.device("cuda", 0)


def llama_config(**kw):
    from transformers import LlamaConfig
    cfg = LlamaConfig(**kw)
    cfg._attn_implementation = "sdpa"
    return cfg


# Shapes of public models (their config.json values), built with random weights.
LLAMA_1B = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, max_position_embeddings=8192,
                rope_theta=500000.0, head_dim=64)
QWEN_05B = dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True, max_position_embeddings=8192,
                head_dim=64)

CASES = [
    ("llama1b-seq2048-mb4", LLAMA_1B, 2048, 4, False),
    ("llama1b-seq2048-mb4-ckpt", LLAMA_1B, 2048, 4, True),
    ("llama1b-seq4096-mb2", LLAMA_1B, 4096, 2, False),
    ("qwen05b-seq2048-mb8", QWEN_05B, 2048, 8, False),
]


def run_llm(name, shape, seq, mb, ckpt):
    from transformers import LlamaForCausalLM
    cfg = llama_config(**shape)
    cfg.to_json_file(os.path.join(out_dir, name + ".config.json"))
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    with torch.device(dev):
        model = LlamaForCausalLM(cfg)
    model.train()
    if ckpt:
        model.gradient_checkpointing_enable()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=dev)
    t0 = time.time()
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated(dev)
    reserved = torch.cuda.max_memory_reserved(dev)
    del model, opt, ids, loss
    return dict(case=name, kind="llm", params=params, seq=seq, micro_batch=mb,
                grad_checkpointing="full" if ckpt else "none", precision="bf16-mixed", optimizer="adamw",
                attention="sdpa", peak_allocated_bytes=peak, peak_reserved_bytes=reserved,
                seconds=round(time.time() - t0, 2))


def run_vision(name, arch, batch, size):
    import torchvision
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    model = getattr(torchvision.models, arch)().to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated(dev)
    params = sum(p.numel() for p in model.parameters())
    del model, opt, x, y, loss
    return dict(case=name, kind="vision", model=arch, params=params, batch=batch, image_size=size,
                precision="bf16-mixed", optimizer="sgd-momentum", peak_allocated_bytes=peak)


def main():
    import transformers
    env = dict(record="env", torch=torch.__version__, transformers=transformers.__version__,
               gpu=torch.cuda.get_device_name(dev), cuda=torch.version.cuda)
    print(json.dumps(env), flush=True)
    for case in CASES:
        try:
            print(json.dumps(run_llm(*case)), flush=True)
        except Exception as e:
            print(json.dumps(dict(case=case[0], error=str(e)[:400])), flush=True)
    for name, arch, batch, size in (("resnet50-b128", "resnet50", 128, 224), ("vit_b_16-b64", "vit_b_16", 64, 224)):
        try:
            print(json.dumps(run_vision(name, arch, batch, size)), flush=True)
        except Exception as e:
            print(json.dumps(dict(case=name, error=str(e)[:400])), flush=True)


main()
