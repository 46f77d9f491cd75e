// Task settings: values parsed and checked where they enter, errors word for word at their origin.
#include "size/settings.h"

#include <catch2/catch.hpp>
#include <set>

#include "manifest/helpers.h"
#include "size/estimate.h"
#include "size/task_args.h"
#include "util/strings.h"

using gp::test::ErrorOf;
using gp::test::TaskFromArgs;
namespace size = gp::size;

namespace {
std::string SettingsError(const std::string& args) {
  return ErrorOf([&] { size::EstimateTask(TaskFromArgs(args)); });
}
}  // namespace

TEST_CASE("size settings: defaults and origins", "[size]") {
  const size::Task t =
      TaskFromArgs("--model llama-2-7b --method lora --lora-targets q_proj,v_proj --tp 2 --gpus 4");
  CHECK(t.method == size::Method::kLora);
  CHECK(t.lora_targets == std::vector<std::string>{"q", "v"});
  CHECK(t.precision == size::Precision::kBf16Mixed);
  CHECK(t.strategy == size::Strategy::kDdp);
  CHECK(t.origins.at("parallel.tp").str() == "--tp");
  CHECK(t.origins.count("precision") == 0);
  CHECK(TaskFromArgs("--model t5-small --method lora").lora_targets ==
        std::vector<std::string>{"q", "k", "v", "o", "up", "down"});
  CHECK(TaskFromArgs("--model llama-2-7b --lora-targets attention,down").lora_targets ==
        std::vector<std::string>{"q", "k", "v", "o", "down"});
  CHECK(TaskFromArgs("--model llama-2-7b --headroom 15%").c.headroom == Approx(0.15));
  CHECK(TaskFromArgs("--model llama-2-7b --cuda-context 512MiB").c.cuda_context == 536870912ULL);
  CHECK(TaskFromArgs("--model llama-2-7b --chunked-loss").chunked_loss);
  CHECK_FALSE(TaskFromArgs("--model llama-2-7b --flash-attention=false").flash_attention);
}

TEST_CASE("size settings: bad values name the flag", "[size]") {
  CHECK(SettingsError("--model llama-2-7b --method loar") ==
        "2 --method: unknown value \"loar\" (did you mean \"lora\"?)");
  CHECK(SettingsError("--model llama-2-7b --parallel zero4") ==
        "2 --parallel: unknown value \"zero4\" (did you mean \"zero1\"?)");
  CHECK(SettingsError("--model llama-2-7") ==
        "2 --model: unknown model \"llama-2-7\" (did you mean \"llama-2-7b\"?)");
  CHECK(
      SettingsError("--model gpt-9") ==
      "2 --model: unknown model \"gpt-9\" (gpuprep size --list-models shows the table; --config FILE reads a "
      "config.json)");
  CHECK(SettingsError("--model llama-2-7b --tp abc") == "2 --tp: expected a whole number, got \"abc\"");
  CHECK(SettingsError("--model llama-2-7b --gpus 0") == "2 --gpus: must be between 1 and 65536, got 0");
  CHECK(SettingsError("--model llama-2-7b --headroom 95%") ==
        "2 --headroom: must be between 0 and 90, got 95");
  CHECK(SettingsError("--model llama-2-7b --flash-attention=maybe") ==
        "2 --flash-attention: expected true or false, got \"maybe\"");
  CHECK(SettingsError("--model llama-2-7b --gpu-memory 80") ==
        "2 --gpu-memory: expected a GPU memory size such as 80GB or 81559MiB, got \"80\"");
  CHECK(SettingsError("--model llama-2-7b --lora-targets q,qq") ==
        "2 --lora-targets: unknown LoRA target \"qq\" (did you mean \"q\"?)");
  CHECK(SettingsError("--params lots") ==
        "2 --params: expected a parameter count such as 7e9, 7.5B or 6738415616, got \"lots\"");
}

TEST_CASE("size settings: mixture-of-experts and context parallelism are refused", "[size]") {
  CHECK(SettingsError("--model mixtral-8x7b") ==
        "2 --model: \"mixtral-8x7b\" is a mixture-of-experts model; gpuprep size models dense models only");
  CHECK(
      SettingsError("--params 47e9 --experts 8") ==
      "2 --experts: mixture-of-experts models are not modelled (expert parallelism and routing change every "
      "term)");
  CHECK(SettingsError("--model llama-2-7b --cp 2") ==
        "2 --cp: context parallelism is not modelled (it splits the sequence, and the attention's "
        "communication "
        "buffers with it)");
  CHECK(SettingsError("--params 7e9 --experts 1") == "no error");
}

TEST_CASE("size settings: combinations that cannot run", "[size]") {
  CHECK(SettingsError("--method full") ==
        "2 size: name the model: --model NAME (gpuprep size --list-models), --config FILE or --params N");
  CHECK(SettingsError("--model llama-2-7b --params 7e9") ==
        "2 --params: --params describes a model of its own; drop --model/--config or --params");
  CHECK(SettingsError("--model llama-2-7b --layers 32") ==
        "2 --layers: architecture settings go with --params (a model of the table or a config.json has its "
        "own)");
  CHECK(SettingsError("--model llama-2-7b --tp 3 --gpus 3") ==
        "2 --tp: tensor parallelism 3 does not divide the model's 32 attention heads");
  CHECK(SettingsError("--model llama-2-7b --tp 4 --gpus 6") ==
        "2 --gpus: --tp x --pp = 4 needs a multiple of 4 GPUs; --gpus is 6");
  CHECK(SettingsError("--model llama-2-7b --tp 4") ==
        "2 --tp: --tp x --pp = 4 needs a multiple of 4 GPUs; --gpus is 1");
  CHECK(SettingsError("--model llama-3.2-1b --pp 32 --gpus 32") ==
        "2 --pp: more pipeline stages than the model's 16 layers");
  CHECK(SettingsError("--model llama-2-7b --offload optimizer") ==
        "2 --offload: DDP cannot offload; ZeRO (zero1, zero2, zero3) offloads the optimizer");
  CHECK(SettingsError("--model llama-2-7b --offload optimizer --parallel fsdp --gpus 8") ==
        "2 --offload: FSDP offloads parameters, gradients and optimizer together: use --offload params");
  CHECK(SettingsError("--model llama-2-7b --offload params --parallel zero2 --gpus 8") ==
        "2 --offload: parameters are offloaded by zero3, fsdp and fsdp-hybrid only, not zero2");
  CHECK(SettingsError("--model resnet-50 --method lora") ==
        "2 --method: LoRA and QLoRA are modelled for transformer models; ResNet-50 is a vision network");
  CHECK(SettingsError("--params 7e9 --method lora") ==
        "2 --method: LoRA needs the model's layers, hidden size, heads, MLP size and vocabulary (--layers, "
        "--hidden, --heads, --ffn, --vocab with --params)");
  CHECK(SettingsError("--model bert-base-uncased --method lora --lora-targets q,gate") ==
        "2 --lora-targets: BERT base (uncased) has no gate projection (its MLP has two matrices: up, down)");
  CHECK(SettingsError("--model bert-base-uncased --seq 1024") ==
        "2 --seq: BERT base (uncased) has 512 positions; --seq 1024 does not fit");
  CHECK(SettingsError("--model t5-small --compile") ==
        "2 --compile: torch.compile is modelled for decoder models only");
  CHECK(SettingsError("--params 7e9 --hidden 4096 --heads 30") ==
        "2 --heads: 30 heads do not divide the hidden size 4096");
}

TEST_CASE("size settings: counts and sizes", "[size]") {
  uint64_t n = 0;
  CHECK((size::ParseCount("7e9", &n) && n == 7000000000ULL));
  CHECK((size::ParseCount("7.5B", &n) && n == 7500000000ULL));
  CHECK((size::ParseCount("350m", &n) && n == 350000000ULL));
  CHECK((size::ParseCount("6738415616", &n) && n == 6738415616ULL));
  CHECK_FALSE(size::ParseCount("-7e9", &n));
  CHECK_FALSE(size::ParseCount("0", &n));
  CHECK_FALSE(size::ParseCount("1e15", &n));
  CHECK_FALSE(size::ParseCount("7 B", &n));
  CHECK((gp::ParseSize("80GB", &n) && n == 80000000000ULL));
  CHECK((gp::ParseSize("80GiB", &n) && n == 85899345920ULL));
  CHECK((gp::ParseSize("81559MiB", &n) && n == 85520809984ULL));
  CHECK((gp::ParseSize("0.5GB", &n) && n == 500000000ULL));
  CHECK_FALSE(gp::ParseSize("80 GB", &n));
  CHECK_FALSE(gp::ParseSize("GB", &n));
  CHECK_FALSE(gp::ParseSize("1.2.3GB", &n));
}

TEST_CASE("size: a bare parameter count, with and without a shape", "[size]") {
  const size::Estimate bare = size::EstimateTask(TaskFromArgs("--params 7e9"));
  CHECK(bare.lower_bound);
  CHECK_FALSE(bare.Find("activations")->estimated);
  CHECK(bare.Find("weights")->bytes == Approx(6 * 7e9));  // DDP mixed precision: fp32 + 16-bit copies
  const size::Task shaped =
      TaskFromArgs("--params 6738415616 --layers 32 --hidden 4096 --heads 32 --ffn 11008 --vocab 32000");
  const size::Estimate e = size::EstimateTask(shaped);
  CHECK_FALSE(e.lower_bound);
  const size::Estimate table = size::EstimateTask(TaskFromArgs("--model llama-2-7b"));
  CHECK(e.allocated == Approx(table.allocated));
  CHECK(TaskFromArgs("--params 7e9 --layers 32 --hidden 4096 --heads 32 --ffn 11008 --vocab 32000")
            .notes.empty());
  CHECK(TaskFromArgs("--params 70e9 --layers 32 --hidden 4096 --heads 32 --ffn 11008 --vocab 32000")
            .notes.size() == 1);
}

TEST_CASE("size settings: the loss's precision, set or by the precision mode", "[size]") {
  auto logits = [](const std::string& args) {
    return size::EstimateTask(TaskFromArgs("--model llama-3.2-1b --seq 4096 " + args))
        .Find("activations")
        ->formula;
  };
  // transformers upcasts the logits: fp32 unless the whole step runs in fp16 under DeepSpeed or is compiled.
  CHECK(logits("").find("x 14 B (whole fp32 cross-entropy)") != std::string::npos);
  CHECK(logits("--parallel zero2 --precision bf16-mixed").find("(whole fp32 cross-entropy)") !=
        std::string::npos);
  CHECK(logits("--parallel zero2 --precision fp16-mixed").find("x 6 B (whole 16-bit cross-entropy)") !=
        std::string::npos);
  CHECK(logits("--compile").find("x 6 B (whole 16-bit cross-entropy)") != std::string::npos);
  CHECK(logits("--loss-precision 16bit --chunked-loss").find("x 4 B (chunked 16-bit cross-entropy)") !=
        std::string::npos);
  CHECK(logits("--parallel zero2 --precision fp16-mixed --loss-precision fp32")
            .find("x 14 B (whole fp32 cross-entropy)") != std::string::npos);
  CHECK(SettingsError("--model llama-2-7b --loss-precision fp16") ==
        "2 --loss-precision: unknown value \"fp16\" (expected fp32, 16bit)");
  CHECK(SettingsError("--model llama-2-7b --precision fp32 --loss-precision 16bit") ==
        "2 --loss-precision: a 16-bit loss needs 16-bit training; --precision is fp32");
}

TEST_CASE("size: QLoRA's load is a line of its own, counted when it is the peak", "[size]") {
  const size::Estimate q = size::EstimateTask(TaskFromArgs("--model llama-2-70b --method qlora"));
  const size::Term* load = q.Find("load");
  REQUIRE(load);
  CHECK(load->label == "load (not at the same time)");
  CHECK(load->formula.find("load peak = quantized weights ") != std::string::npos);
  CHECK(load->bytes == 0);  // training needs more than the load
  CHECK_FALSE(size::EstimateTask(TaskFromArgs("--model llama-2-70b --method lora")).Find("load"));
  // One huge fp32 weight and almost nothing to train: the load, 4 bytes of that weight above the quantized
  // ones, is the peak.
  const size::Estimate big = size::EstimateTask(
      TaskFromArgs("--params 192M --layers 1 --hidden 64 --heads 1 --ffn 1000000 --vocab 16 --method qlora "
                   "--lora-rank 1 --lora-targets q --precision fp32 --seq 1"));
  const size::Term* peak = big.Find("load");
  REQUIRE(peak);
  CHECK(peak->bytes > 0);
  CHECK(peak->formula.find("the load is the peak") != std::string::npos);
  double sum = 0;
  for (const auto& term : big.terms)
    if (term.key != "cuda_context" && term.key != "headroom") sum += term.bytes;
  CHECK(sum == Approx(big.allocated));
  // Training counts the weight dequantized to 16 bits (2 bytes each); the load holds it in fp32.
  CHECK(big.allocated > big.Find("weights")->bytes + 2.0 * 64 * 1000000);
}

TEST_CASE("size settings: a vision task speaks images, and hostile image settings are refused",
          "[size][vision]") {
  const size::Task t = TaskFromArgs("--model yolov8x --batch 32 --gpus 2 --image-size 640");
  CHECK(t.image_h == 640);
  CHECK(t.image_w == 640);
  CHECK(t.batch == 32);
  CHECK(t.micro_batch == 16);  // batch is images over all GPUs, as Ultralytics' batch
  const size::Task wide = TaskFromArgs("--model resnet-50 --image-size 224x320");
  CHECK(wide.image_h == 224);
  CHECK(wide.image_w == 320);
  const size::Task dflt = TaskFromArgs("--model yolov8n");
  CHECK(dflt.image_h == 640);
  CHECK(TaskFromArgs("--model vit-b-16").image_h == 224);
  CHECK(SettingsError("--model yolov8x --image-size 0") ==
        "2 --image-size: must be between 32 and 16384, got 0");
  CHECK(SettingsError("--model yolov8x --image-size 1000000000") ==
        "2 --image-size: must be between 32 and 16384, got 1000000000");
  CHECK(SettingsError("--model yolov8x --image-size 1e9") ==
        "2 --image-size: expected a whole number, got \"1e9\"");
  CHECK(SettingsError("--model yolov8x --image-size 640x") ==
        "2 --image-size: expected a whole number, got \"\"");
  CHECK(SettingsError("--model yolov8x --batch 99999999999999999999") ==
        "2 --batch: expected a whole number, got \"99999999999999999999\"");
  CHECK(SettingsError("--model yolov8x --batch 0") == "2 --batch: must be between 1 and 1000000, got 0");
  CHECK(SettingsError("--model yolov8x --batch 15 --gpus 2") ==
        "2 --batch: --batch 15 does not divide over 2 GPUs (each GPU takes batch / GPUs images)");
  CHECK(
      SettingsError("--model yolov8x --batch 16 --micro-batch 8") ==
      "2 --batch: give --batch (images per step over all GPUs) or --micro-batch (images per GPU), not both");
  CHECK(SettingsError("--model yolov8x --image-size 650") ==
        "2 --image-size: YOLOv8x takes sizes that are multiples of 32 pixels, not 650x650");
  CHECK(SettingsError("--model vit-b-16 --image-size 224x320") ==
        "2 --image-size: ViT-B/16 takes square images, not 224x320");
  CHECK(SettingsError("--model llama-2-7b --image-size 640") ==
        "2 --image-size: images are a vision network's; Llama 2 7B is a transformer: give --seq and "
        "--micro-batch");
  CHECK(
      SettingsError("--model yolov8x --seq 2048") ==
      "2 --seq: YOLOv8x is a vision network: it has no sequence, attention kernel choice or token loss (give "
      "--image-size and --batch)");
  CHECK(SettingsError("--model yolov8x --precision bf16-pure") ==
        "2 --precision: vision networks train in fp32 or with autocast: fp32, fp16-mixed or bf16-mixed");
}

TEST_CASE("size: a vision task is estimated from its layer table", "[size][vision]") {
  const size::Estimate e = size::EstimateTask(TaskFromArgs("--model yolov8x --batch 16 --image-size 640"));
  CHECK_FALSE(e.lower_bound);
  const size::Term* a = e.Find("activations");
  REQUIRE(a != nullptr);
  CHECK(a->estimated);
  CHECK(a->bytes > 5e9);
  CHECK(a->formula.find("16 images x 640x640") != std::string::npos);
  const size::Estimate half = size::EstimateTask(TaskFromArgs("--model yolov8x --batch 16 --gpus 2"));
  CHECK(half.Find("activations")->bytes < 0.51 * a->bytes);
  const size::Estimate ck =
      size::EstimateTask(TaskFromArgs("--model yolov8x --batch 16 --grad-checkpointing full"));
  CHECK(ck.Find("activations")->bytes < 0.5 * a->bytes);
}

TEST_CASE("sizes outside Docker: decimal or binary units, a bare unit letter refused with both spellings",
          "[size]") {
  uint64_t n = 0;
  CHECK((gp::ParseSize("2PB", &n) && n == 2000000000000000ULL));
  CHECK((gp::ParseSize("1PiB", &n) && n == 1125899906842624ULL));
  CHECK((gp::ParseSize("0", &n) && n == 0));
  for (const char* bare : {"80G", "80g", "1.5T", "512M", "64k", "2P"}) {
    INFO(bare);
    CHECK_FALSE(gp::ParseSize(bare, &n));
  }
  CHECK(gp::BareUnitHint("80G") == "; write 80GB for 80 x 10^9 bytes or 80GiB for 80 x 2^30");
  CHECK(gp::BareUnitHint("1.5t") == "; write 1.5TB for 1.5 x 10^12 bytes or 1.5TiB for 1.5 x 2^40");
  CHECK(gp::BareUnitHint("64k") == "; write 64kB for 64 x 10^3 bytes or 64KiB for 64 x 2^10");
  CHECK(gp::BareUnitHint("80GB").empty());
  CHECK(gp::BareUnitHint("G").empty());
  CHECK(gp::BareUnitHint("x8G").empty());
}

TEST_CASE("size settings: Apply reads the settings table, every key once and each with its reader",
          "[size]") {
  std::set<std::string> keys;
  for (const size::KeyInfo& k : size::SettingKeys()) {
    INFO(k.key);
    CHECK(k.apply != nullptr);
    CHECK(keys.insert(k.key).second);
  }
  // Each kind of reader: a count, a size, a choice, a flag and a constant, applied through the table.
  size::Task t;
  const size::Origin o{"", 0, 0, "--x"};
  size::Apply(t, {"parallel.tp", "4", o});
  size::Apply(t, {"storage.dataset", "2TB", o});
  size::Apply(t, {"optimizer", "sgd", o});
  size::Apply(t, {"host.embedding_offload", "true", o});
  size::Apply(t, {"constants.zero_reduce_bucket", "5e8", o});
  size::Apply(t, {"constants.qlora_saves_inputs", "true", o});
  CHECK(t.tp == 4);
  CHECK(t.dataset_bytes == 2000000000000ULL);
  CHECK(t.optimizer == size::Optimizer::kSgd);
  CHECK(t.embedding_offload);
  CHECK(t.c.zero_reduce_bucket == 500000000ULL);
  CHECK(t.c.qlora_saves_inputs);
  CHECK(t.origins.at("parallel.tp").str() == "--x");
  // A key the table does not list is refused, inside a known group too (it used to pass unread).
  CHECK(ErrorOf([&] {
          size::Apply(t, {"host.nonsense", "1", o});
        }) == "2 --x: unknown setting \"host.nonsense\"");
  CHECK(ErrorOf([&] { size::Apply(t, {"nonsense", "1", o}); }) == "2 --x: unknown setting \"nonsense\"");
}
