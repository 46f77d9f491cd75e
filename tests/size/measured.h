// Published measured peaks of training runs, each with the exact configuration its authors give and where
// they give it. tests/size/measured_test.cc compares each with gpuprep's allocated subtotal (weights,
// gradients, optimizer states, activations, buffers; CUDA context and headroom apart). docs/size.md shows
// the table with the errors and lists the published measurements left out, with the reason.
#pragma once

namespace gp::test {

struct Measured {
  const char* id;
  const char* method;  // full, lora, qlora (for the worst error per method)
  const char* args;    // the configuration as `gpuprep size` flags
  double bytes;        // the published peak, in bytes, less a separately published CUDA context
  const char* metric;  // what the publisher measured
  const char* source;  // where
};

constexpr double kGiB = 1073741824.0, kMiB = 1048576.0;

// transformers docs: nvidia-smi after `torch.ones((1, 1)).to("cuda")` showed 1,343 MB (MiB) of context.
constexpr double kBertContext = 1343 * kMiB;

#define GP_TT3B \
  "--model llama-3.2-3b --method full --precision bf16-pure --optimizer adamw --seq 4096 --micro-batch 2"
#define GP_PEFT "--model llama-3.2-3b --precision bf16-pure --optimizer adamw --seq 768 --micro-batch 4"
#define GP_LIT                                                                                            \
  "--precision bf16-pure --lora-rank 8 --lora-targets q,v --lora-dropout 0.05 --seq 1304 --chunked-loss " \
  "--lora-adapter-bytes 2 --grad-accumulation 128"
#define GP_BERT                                                                             \
  "--model bert-large-uncased --seq 512 --flash-attention=false --foreach-optimizer=false " \
  "--zero-grad-set-to-none=false"

constexpr const char* kTorchtune32 =
    "pytorch/torchtune README.md@1814feb17 (Optimization flags: Llama 3.2 3B, full_finetune_single_device, "
    "batch 2, "
    "max sequence length 4096, bf16, A100; techniques added in order)";
constexpr const char* kTorchtune31 =
    "pytorch/torchtune README.md@30b8519e8 (Memory and training speed: batch size 2, packed to 2048, torch "
    "compile) with the recipe's config at that commit";
constexpr const char* kPeftResults =
    "huggingface/peft method_comparison/MetaMathQA/results/*--llama-3.2-3B-*.json@5d602fdb "
    "(default_training_params: "
    "bf16 model, AdamW, batch 4, max_seq_length 768, no gradient checkpointing; L40S)";
constexpr const char* kLitgpt =
    "Lightning-AI/litgpt tutorials/resource-tables.md@0cc02afa (LitGPT 8641822, A100 40GB, bf16-true, "
    "Alpaca: "
    "longest Llama 2 example 1304 tokens; finetune/lora.py@8641822: r 8 on query and value, dropout 0.05, "
    "lm_head_chunk_size 128, batch 128 = micro-batch x accumulation; bitsandbytes 0.41.1)";
constexpr const char* kHfAnatomy =
    "huggingface/transformers docs/source/en/model_memory_anatomy.md@249ef816 and docs/source/zh/"
    "perf_train_gpu_one.md (bert-large-uncased sequence classification, 512 tokens, Trainer, V100, "
    "nvidia-smi)";

inline const Measured kMeasured[] = {
    {"torchtune 3B + packed", "full", GP_TT3B, 60.0 * kGiB, "Peak Memory Active 60.0 GiB", kTorchtune32},
    {"torchtune 3B + compile", "full", GP_TT3B " --compile", 51.0 * kGiB, "Peak Memory Active 51.0 GiB",
     kTorchtune32},
    {"torchtune 3B + chunked CE", "full", GP_TT3B " --compile --chunked-loss", 42.9 * kGiB,
     "Peak Memory Active 42.9 GiB", kTorchtune32},
    {"torchtune 3B + checkpointing", "full", GP_TT3B " --compile --chunked-loss --grad-checkpointing full",
     24.9 * kGiB, "Peak Memory Active 24.9 GiB", kTorchtune32},
    {"PEFT full fine-tune 3B", "full", GP_PEFT " --method full", 38868615168.0,
     "accelerator_memory_max 38868615168 B (max_memory_reserved)", kPeftResults},
    {"PEFT LoRA r32 3B", "lora", GP_PEFT " --method lora --lora-rank 32 --lora-targets q,v", 22292725760.0,
     "accelerator_memory_max 22292725760 B (max_memory_reserved)", kPeftResults},
    {"PEFT LoRA r64 3B", "lora", GP_PEFT " --method lora --lora-rank 64 --lora-targets q,v", 22552772608.0,
     "accelerator_memory_max 22552772608 B (max_memory_reserved)", kPeftResults},
    {"LitGPT LoRA Llama 2 7B mb1", "lora", "--model llama-2-7b --method lora --micro-batch 1 " GP_LIT,
     21.30e9, "Max GPU RAM 21.30 GB (max_memory_allocated / 1e9)", kLitgpt},
    {"LitGPT LoRA Llama 2 7B mb2", "lora",
     "--model llama-2-7b --method lora --micro-batch 2 " GP_LIT " --grad-accumulation 64", 29.07e9,
     "Max GPU RAM 29.07 GB", kLitgpt},
    {"LitGPT QLoRA nf4 Llama 2 7B", "qlora",
     "--model llama-2-7b --method qlora --qlora-double-quant=false --qlora-saves-inputs " GP_LIT, 14.14e9,
     "Max GPU RAM 14.14 GB", kLitgpt},
    {"LitGPT QLoRA nf4-dq Llama 2 7B", "qlora",
     "--model llama-2-7b --method qlora --qlora-saves-inputs " GP_LIT, 13.84e9, "Max GPU RAM 13.84 GB",
     kLitgpt},
    {"LitGPT LoRA Llama 2 13B", "lora", "--model llama-2-13b --method lora " GP_LIT, 38.12e9,
     "Max GPU RAM 38.12 GB", kLitgpt},
    {"LitGPT QLoRA nf4 Llama 2 13B", "qlora",
     "--model llama-2-13b --method qlora --qlora-double-quant=false --qlora-saves-inputs " GP_LIT, 23.14e9,
     "Max GPU RAM 23.14 GB", kLitgpt},
    {"LitGPT QLoRA nf4-dq Llama 2 13B", "qlora",
     "--model llama-2-13b --method qlora --qlora-saves-inputs " GP_LIT, 22.55e9, "Max GPU RAM 22.55 GB",
     kLitgpt},
    {"HF BERT-large fp32 batch 4", "full", GP_BERT " --precision fp32 --micro-batch 4",
     14949 * kMiB - kBertContext, "GPU memory occupied 14949 MB (nvidia-smi) less 1343 MB", kHfAnatomy},
    {"HF BERT-large fp32 batch 1 x 4", "full",
     GP_BERT " --precision fp32 --micro-batch 1 --grad-accumulation 4", 8681 * kMiB - kBertContext,
     "8681 MB less 1343 MB", kHfAnatomy},
    {"HF BERT-large + checkpointing", "full",
     GP_BERT " --precision fp32 --micro-batch 1 --grad-accumulation 4 --grad-checkpointing full",
     6775 * kMiB - kBertContext, "6775 MB less 1343 MB", kHfAnatomy},
    {"HF BERT-large fp16 batch 4", "full", GP_BERT " --precision fp16-mixed --micro-batch 4",
     13939 * kMiB - kBertContext, "13939 MB less 1343 MB", kHfAnatomy},
    {"HF BERT-large fp16 + checkpointing", "full",
     GP_BERT " --precision fp16-mixed --micro-batch 1 --grad-accumulation 4 --grad-checkpointing full",
     7275 * kMiB - kBertContext, "7275 MB less 1343 MB", kHfAnatomy},
    {"HF BERT-large 8-bit Adam batch 4", "full",
     GP_BERT " --precision fp32 --optimizer adamw-8bit --micro-batch 4", 13085 * kMiB - kBertContext,
     "13085 MB less 1343 MB", kHfAnatomy},
    {"HF BERT-large 8-bit Adam fp16 + checkpointing", "full",
     GP_BERT " --precision fp16-mixed --optimizer adamw-8bit --micro-batch 1 --grad-accumulation 4 "
             "--grad-checkpointing full",
     5363 * kMiB - kBertContext, "5363 MB less 1343 MB", kHfAnatomy},
    {"torchtune Llama 3.1 70B LoRA, 8 GPUs", "lora",
     "--model llama-3.1-70b --method lora --lora-rank 16 --lora-targets q,k,v --precision bf16-pure "
     "--parallel fsdp "
     "--gpus 8 --seq 2048 --micro-batch 2 --grad-checkpointing full --chunked-loss --compile "
     "--foreach-optimizer=false --lora-adapter-bytes 2",
     27.6 * kGiB, "Peak Memory per GPU 27.6 GiB (recipes/configs/llama3_1/70B_lora.yaml)", kTorchtune31},
    {"torchtune Llama 3.1 8B QLoRA", "qlora",
     "--model llama-3.1-8b --method qlora --lora-rank 8 --lora-targets all --precision bf16-pure --seq 2048 "
     "--micro-batch 2 --grad-accumulation 16 --grad-checkpointing full --chunked-loss --compile "
     "--foreach-optimizer=false --lora-adapter-bytes 2",
     7.4 * kGiB, "Peak Memory per GPU 7.4 GiB (recipes/configs/llama3_1/8B_qlora_single_device.yaml)",
     kTorchtune31},
};

// Measurements each with its own tolerance, one field per column of the publisher's configuration. The
// estimate's allocated subtotal must lie within [-under, +over] of `bytes`; where the run fit a GPU
// (`fits_bytes` > 0), the per-GPU need (context and headroom included) must not exceed it.
struct MeasuredCase {
  const char* id;
  const char* method;
  const char* model;  // `gpuprep size` flags naming the model (a table row, or --params with its shape)
  int seq, micro_batch, vocab;
  const char* framework;  // framework and version as the publisher states them
  const char* precision;  // --precision
  const char* args;       // the rest of the configuration as flags
  double bytes;           // the published figure
  const char* metric;
  const char* source;
  double over, under;  // tolerance, as fractions of `bytes`
  double fits_bytes;   // the GPU the run fit on (nvidia-smi total), 0: not asserted
};

// Qwen-72B-Chat-Int4, Q-LoRA on one A100-SXM4-80G. The model as its config.json gives it
// (https://huggingface.co/Qwen/Qwen-72B/blob/main/config.json: 80 layers, hidden 8192, 64 heads, no grouped
// keys, intermediate_size 49152 of which each of w1 and w2 takes half, vocabulary 152064, untied); --params
// is the count those give for a Llama-style decoder (Qwen's c_attn biases, 1.97M, left out). finetune.py at
// QwenLM/Qwen@2df8e8ac: LoRA r 64, dropout 0.05 on c_attn, c_proj, w1, w2 (c_attn, one 8192 -> 24576 matrix,
// has the adapter parameters of gpuprep's q and k together; c_proj is o and down); GPTQ int4 base weights
// (group size 128: about 0.52 B per weight, within 1% of NF4 with double quantization, which stands for it);
// fp16 under DeepSpeed ZeRO-2 (finetune/ds_config_zero2.json, finetune_qlora_single_gpu.sh), gradient
// checkpointing. The table gives no memory metric; its "G" is read as 10^9 bytes.
#define GP_QWEN72 "--params 72285954048 --layers 80 --hidden 8192 --heads 64 --ffn 24576 --vocab 152064"
#define GP_QWEN72_FRAMEWORK                                                                               \
  "transformers >=4.32,<4.38 (QwenLM/Qwen requirements.txt), PyTorch 2.0, CUDA 11.8, flash attention 2, " \
  "DeepSpeed ZeRO-2"
#define GP_QWEN72_ARGS                                                                                    \
  "--method qlora --lora-rank 64 --lora-targets q,k,o,gate,up,down --lora-dropout 0.05 --parallel zero2 " \
  "--gpus 1 --grad-accumulation 8 --grad-checkpointing full"
constexpr const char* kQwenTable =
    "QwenLM/Qwen README.md@2df8e8ac (Profiling of Memory and Speed: single A100-SXM4-80G, batch size 1, "
    "gradient accumulation 8; 72B Q-LoRA row)";

inline const MeasuredCase kMeasuredCases[] = {
    {"Qwen-72B-Chat-Int4 Q-LoRA, 256 tokens", "qlora", GP_QWEN72, 256, 1, 152064, GP_QWEN72_FRAMEWORK,
     "fp16-mixed", GP_QWEN72_ARGS, 61.4e9, "61.4G", kQwenTable, 0.10, 0.15, 0},
    {"Qwen-72B-Chat-Int4 Q-LoRA, 8192 tokens", "qlora", GP_QWEN72, 8192, 1, 152064, GP_QWEN72_FRAMEWORK,
     "fp16-mixed", GP_QWEN72_ARGS, 75.6e9, "75.6G", kQwenTable, 0.10, 0.15, 81920 * kMiB},
};

#undef GP_QWEN72
#undef GP_QWEN72_FRAMEWORK
#undef GP_QWEN72_ARGS
#undef GP_TT3B
#undef GP_PEFT
#undef GP_LIT
#undef GP_BERT

}  // namespace gp::test
