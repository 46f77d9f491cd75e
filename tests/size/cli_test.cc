// `gpuprep size` through the command line (docs/cli.md): exit codes, the table, the JSON document, Task
// documents with path:line:col errors, `manifest validate` of a Task, colour only on a terminal.
#include "support/cli.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apply/harness.h"

using gp::test::Gpuprep;
using nlohmann::json;

namespace {
const char* kTask =
    "apiVersion: gpuprep/v1\n"              // 1
    "kind: Task\n"                          // 2
    "metadata:\n"                           // 3
    "  name: llama70b-lora\n"               // 4
    "model: llama-2-70b\n"                  // 5
    "method: lora\n"                        // 6
    "lora: {rank: 16, targets: [q, v]}\n"   // 7
    "parallel:\n"                           // 8
    "  strategy: zero3\n"                   // 9
    "  gpus: 16\n"                          // 10
    "batch: {seq: 4096, micro_batch: 1}\n"  // 11
    "grad_checkpointing: full\n";           // 12
}  // namespace

TEST_CASE("size: the 70B answers, term by term", "[size][cli]") {
  for (const char* method : {"full", "lora", "qlora"}) {
    INFO(method);
    auto r = Gpuprep(
        {"size", "--model", "llama-2-70b", "--method", method, "--parallel", "zero3", "--gpus", "16"});
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    for (const char* row :
         {"weights", "gradients", "optimizer states", "activations (incl. logits)", "temporary buffers",
          "allocated subtotal", "CUDA context", "headroom", "per GPU", "all 16 GPUs"})
      CHECK(r.out.find(row) != std::string::npos);
  }
  auto full = Gpuprep({"size", "--model", "llama-2-70b", "--parallel", "zero3", "--gpus", "16"});
  CHECK(full.out.find("  weights                               8.62\n") != std::string::npos);
  CHECK(full.out.find("  optimizer states                     51.73\n") != std::string::npos);
  auto verbose =
      Gpuprep({"size", "--model", "llama-2-70b", "--parallel", "zero3", "--gpus", "16", "--verbose"});
  CHECK(verbose.out.find("= 2 B x 68.98B parameters / 16 (ZeRO shards)") != std::string::npos);
  CHECK(verbose.out.find("source: deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641") !=
        std::string::npos);
}

TEST_CASE("size --json: the documented keys", "[size][cli]") {
  auto r = Gpuprep({"size", "--json", "--model", "llama-2-70b", "--parallel", "zero3", "--gpus", "16",
                    "--grad-checkpointing", "full", "--gpu-memory", "80GB"});
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j["task"]["model"] == "Llama 2 70B");
  CHECK(j["task"]["params"] == 68976648192ULL);
  CHECK(j["task"]["parallel"]["strategy"] == "zero3");
  CHECK(j["task"]["origins"]["parallel.gpus"] == "--gpus");
  const json& terms = j["per_gpu"]["terms"];
  REQUIRE(terms.size() == 8);
  std::vector<std::string> keys;
  int64_t sum = 0;
  for (const auto& t : terms) {
    keys.push_back(t["key"]);
    CHECK(t["formula"].is_string());
    CHECK(t["source"].is_string());
    if (t["key"] != "cuda_context" && t["key"] != "headroom") sum += t["bytes"].get<int64_t>();
  }
  CHECK(keys == std::vector<std::string>{"weights", "gradients", "optimizer", "activations", "buffers",
                                         "phases", "cuda_context", "headroom"});
  CHECK(std::abs(sum - j["per_gpu"]["allocated_bytes"].get<int64_t>()) <= 8);
  CHECK(j["gpus"] == 16);
  CHECK(j["fit"]["gpus"] == 20);
  CHECK(j["lower_bound"] == false);
  CHECK(r.out.find('\033') == std::string::npos);
}

TEST_CASE("size: bad input is exit 2 with one error line", "[size][cli]") {
  auto r = Gpuprep({"size", "--method", "lora"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: size: name the model: --model NAME (gpuprep size --list-models), --config FILE or "
        "--params N\n");
  CHECK(r.out.empty());
  auto bad = Gpuprep({"size", "--model", "llama-2-70b", "--precision", "fp4"});
  CHECK(bad.code == 2);
  CHECK(bad.err == "gpuprep: error: --precision: unknown value \"fp4\" (did you mean \"fp8\"?)\n");
  auto moe = Gpuprep({"size", "--model", "mixtral-8x7b"});
  CHECK(moe.code == 2);
}

TEST_CASE("size --task: a Task document, flags override it, errors point into it", "[size][cli]") {
  gp::test::TempRoot root;
  root.Write("/task.yaml", kTask);
  const std::string task = root.path() + "/task.yaml";
  auto r = Gpuprep({"size", "--task", task, "--json"});
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["task"]["method"] == "lora");
  CHECK(j["task"]["lora"]["targets"] == json::array({"q", "v"}));
  CHECK(j["task"]["origins"]["lora.rank"] == task + ":7:14");
  auto over = Gpuprep({"size", "--task", task, "--json", "--gpus", "32"});
  CHECK(json::parse(over.out)["gpus"] == 32);

  std::string bad = kTask;
  bad.replace(bad.find("method: lora"), 12, "method: lroa");
  root.Write("/bad.yaml", bad);
  auto e = Gpuprep({"size", "--task", root.path() + "/bad.yaml"});
  CHECK(e.code == 2);
  CHECK(e.err == "gpuprep: error: " + root.path() +
                     "/bad.yaml:6:9: unknown value \"lroa\" (did you mean \"lora\"?)\n");
  std::string key = kTask;
  key.replace(key.find("rank: 16"), 8, "rnak: 16");
  root.Write("/key.yaml", key);
  auto k = Gpuprep({"size", "--task", root.path() + "/key.yaml"});
  CHECK(k.err == "gpuprep: error: " + root.path() +
                     "/key.yaml:7:8: unknown key \"lora.rnak\" (did you mean \"rank\"?)\n");
  std::string combo = kTask;
  combo.replace(combo.find("  gpus: 16"), 10, "  gpus: 15\n  tp: 2");
  root.Write("/combo.yaml", combo);
  auto c = Gpuprep({"size", "--task", root.path() + "/combo.yaml"});
  CHECK(c.err == "gpuprep: error: " + root.path() +
                     "/combo.yaml:10:9: --tp x --pp = 2 needs a multiple of 2 GPUs; --gpus is 15\n");
}

TEST_CASE("manifest validate checks a Task document like size does", "[size][cli]") {
  gp::test::TempRoot root;
  root.Write("/task.yaml", kTask);
  auto ok = Gpuprep({"manifest", "validate", root.path() + "/task.yaml"});
  CHECK(ok.code == 0);
  CHECK(ok.out == root.path() + "/task.yaml: ok (kind Task)\n");
  std::string bad = kTask;
  bad.replace(bad.find("seq: 4096"), 9, "seq: many");
  root.Write("/bad.yaml", bad);
  auto e = Gpuprep({"manifest", "validate", root.path() + "/bad.yaml"});
  CHECK(e.code == 2);
  CHECK(e.err ==
        "gpuprep: error: " + root.path() + "/bad.yaml:11:14: expected a whole number, got \"many\"\n");
}

TEST_CASE("size --config reads a config.json, relative to a Task document", "[size][cli]") {
  gp::test::TempRoot root;
  root.Write("/m/config.json",
             "{\"model_type\": \"mistral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, "
             "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, "
             "\"vocab_size\": 32000}");
  auto r = Gpuprep({"size", "--json", "--config", root.path() + "/m/config.json"});
  REQUIRE(r.code == 0);
  CHECK(json::parse(r.out)["task"]["params"] == 7241732096ULL);
  root.Write("/m/task.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\nconfig: config.json\n");
  auto t = Gpuprep({"size", "--json", "--task", root.path() + "/m/task.yaml"});
  REQUIRE(t.code == 0);
  CHECK(json::parse(t.out)["task"]["model_source"] == "config " + root.path() + "/m/config.json");
  auto missing = Gpuprep({"size", "--config", root.path() + "/none.json"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("gpuprep: error: cannot read " + root.path() + "/none.json") == 0);
}

TEST_CASE("size: the model list, colour only on a terminal", "[size][cli]") {
  auto l = Gpuprep({"size", "--list-models"});
  CHECK(l.code == 0);
  CHECK(l.out.find("llama-2-70b") != std::string::npos);
  auto lj = Gpuprep({"size", "--list-models", "--json"});
  CHECK(json::parse(lj.out)["models"].size() == 41);  // the shipped table, YOLO11n to x included
  auto tty = Gpuprep({"size", "--model", "llama-3-8b"}, {true, {}});
  CHECK(tty.out.find("\033[1m") != std::string::npos);
  auto no_color = Gpuprep({"size", "--model", "llama-3-8b"}, {true, {{"NO_COLOR", "1"}}});
  CHECK(no_color.out.find('\033') == std::string::npos);
  auto bare = Gpuprep({"size", "--params", "7e9"});
  CHECK(bare.code == 0);
  CHECK(bare.out.find("not estimated") != std::string::npos);
  CHECK(bare.out.find("(lower bound)") != std::string::npos);
}

TEST_CASE("size: a lower bound is never a fit", "[size][cli]") {
  auto r = Gpuprep({"size", "--params", "1e9", "--micro-batch", "16", "--gpu-memory", "80GB"});
  CHECK(r.code == 0);
  CHECK(r.out.find("per GPU: unknown (the estimate is a lower bound") != std::string::npos);
  CHECK(r.out.find("SERVERS THAT FIT: none recommended") != std::string::npos);
  CHECK(r.out.find("Tesla P100 PCIe 12GB") == std::string::npos);
  auto j = Gpuprep({"size", "--json", "--params", "1e9", "--micro-batch", "16", "--gpu-memory", "80GB"});
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc["fit"].value("unknown", false));
  CHECK(doc["fit"]["gpus"].is_null());
  CHECK(doc["servers"]["boards"].empty());
  CHECK(doc["servers"].value("not_recommended", json()).is_string());
}

TEST_CASE("size: --loss-precision in a Task document", "[size][cli]") {
  gp::test::TempRoot root;
  root.Write("/loss.yaml", std::string(kTask) + "loss_precision: 16bit\n");
  auto r = Gpuprep({"size", "--task", root.path() + "/loss.yaml", "--verbose"});
  CHECK(r.code == 0);
  CHECK(r.out.find("16-bit cross-entropy") != std::string::npos);
  CHECK(r.out.find(", 16bit loss") != std::string::npos);
}

TEST_CASE("size: a vision task speaks images, in text, JSON and a Task document", "[size][cli][vision]") {
  auto r =
      Gpuprep({"size", "--model", "yolov8x", "--batch", "16", "--image-size", "640", "--gpu-memory", "24GB"});
  CHECK(r.code == 0);
  CHECK(r.out.find("images 640x640, batch 16 (16 per GPU), checkpointing none") != std::string::npos);
  CHECK(r.out.find("seq ") == std::string::npos);
  CHECK(r.out.find("flash") == std::string::npos);
  CHECK(r.out.find("loss") == std::string::npos);
  CHECK(r.out.find("(lower bound)") == std::string::npos);
  CHECK(r.out.find("per GPU: 1 (") != std::string::npos);
  auto j = Gpuprep({"size", "--json", "--model", "yolov8x", "--batch", "32", "--gpus", "2"});
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc["task"]["batch"]["images"] == 32);
  CHECK(doc["task"]["batch"]["micro_batch"] == 16);
  CHECK(doc["task"]["batch"]["image_height"] == 640);
  CHECK(doc["task"]["batch"]["image_width"] == 640);
  CHECK(doc["task"]["batch"].count("seq") == 0);
  CHECK(doc["task"]["flash_attention"].is_null());
  CHECK(doc["task"]["loss_precision"].is_null());
  CHECK_FALSE(doc["lower_bound"].get<bool>());
  gp::test::TempRoot root;
  root.Write("/yolo.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: yolo}\nmodel: yolov8x\n"
             "batch: {images: 16, image_size: [640, 480]}\n");
  auto d = Gpuprep({"size", "--task", root.path() + "/yolo.yaml"});
  CHECK(d.code == 0);
  CHECK(d.out.find("images 640x480, batch 16 (16 per GPU)") != std::string::npos);
  root.Write("/bad.yaml",
             "apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: yolo}\nmodel: yolov8x\n"
             "batch: {images: 16, micro_batch: 4}\n");
  auto bad = Gpuprep({"size", "--task", root.path() + "/bad.yaml"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("bad.yaml:5:") != std::string::npos);
  auto zero = Gpuprep({"size", "--model", "yolov8x", "--image-size", "0"});
  CHECK(zero.code == 2);
  CHECK(zero.err == "gpuprep: error: --image-size: must be between 32 and 16384, got 0\n");
}

namespace {
// Every "..._bytes" member of a JSON document (a size: totals, subtotals, per GPU) is non-negative: none
// wrapped. (A term's "bytes" may be negative: the phases correction.)
bool NoNegative(const json& j) {
  if (j.is_object())
    for (const auto& item : j.items()) {
      const std::string& key = item.key();
      const json& v = item.value();
      const bool size = key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
      if (size && v.is_number_integer() && !v.is_number_unsigned() && v.get<long long>() < 0) return false;
      if (!NoNegative(v)) return false;
    }
  if (j.is_array())
    for (const auto& v : j)
      if (!NoNegative(v)) return false;
  return true;
}
}  // namespace

TEST_CASE("size: byte counts past 2^63 are clamped or refused, never wrapped", "[size][cli]") {
  auto r = Gpuprep({"size", "--model", "llama-3-8b", "--seq", "10000000", "--micro-batch", "100000",
                    "--flash-attention", "false", "--json"});
  REQUIRE(r.code == 0);
  CHECK(NoNegative(json::parse(r.out)));
  r = Gpuprep({"size", "--model", "llama-3-8b", "--workload", "recommender", "--embedding-rows", "1e14",
               "--embedding-dim", "2048", "--json"});
  REQUIRE(r.code == 0);
  CHECK(NoNegative(json::parse(r.out)));
  r = Gpuprep({"size", "--model", "llama-3-8b", "--workload", "recommender", "--embedding-rows", "1e14",
               "--embedding-dim", "65536", "--json"});
  CHECK(r.code == 2);  // more than 2^60 bytes of tables
  CHECK(r.err.find("--embedding-rows") != std::string::npos);
  r = Gpuprep({"size", "--model", "llama-3-8b", "--gpu-memory", "18000000000000000000"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--gpu-memory") != std::string::npos);
  CHECK(r.out.find("9223372036") == std::string::npos);
}

TEST_CASE("size --boards: a list that names no board is refused, not read as none", "[size][cli]") {
  auto r = Gpuprep({"size", "--model", "llama-2-7b", "--boards", ",,,"});
  CHECK(r.code == 2);
  CHECK(r.err == "gpuprep: error: --boards: \",,,\" names no board (board names, commas between)\n");
}

TEST_CASE("size: a bare unit letter is refused with both spellings", "[size][cli]") {
  auto r = Gpuprep({"size", "--params", "7e9", "--gpu-memory", "80G"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "gpuprep: error: --gpu-memory: expected a GPU memory size such as 80GB or 81559MiB, got \"80G\"; "
        "write 80GB "
        "for 80 x "
        "10^9 bytes or 80GiB for 80 x 2^30\n");
}
