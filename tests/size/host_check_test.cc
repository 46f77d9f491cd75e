// `gpuprep size --host SNAPSHOT` (docs/size.md "Does this host fit?"): an 8x H100 server that fits a 70B LoRA
// run and a 4x L40S server that does not (exit 1, the per-GPU shortfall), a fleet of both, a price list, and
// hostile snapshots and price files refused with one line at the offending position (exit 2).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "apply/harness.h"
#include "support/cli.h"

using gp::test::Gpuprep;
using nlohmann::json;

namespace {

std::string Snapshot(const std::string& name) { return std::string(GP_FIXTURES) + "/snapshots/" + name; }

const std::vector<std::string> kLora = {"size", "--model", "llama-3-70b", "--method", "lora"};

std::vector<std::string> Args(std::vector<std::string> extra) {
  std::vector<std::string> a = kLora;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST_CASE("size --host: 8x H100 fits a 70B LoRA run, 4x L40S does not", "[size][host]") {
  auto h100 = Gpuprep(Args({"--host", Snapshot("h100x8-p5.json")}));
  CHECK(h100.code == 0);
  CHECK(h100.err.empty());
  CHECK(h100.out.find("train-h100-01 (") != std::string::npos);
  CHECK(h100.out.find("): fits\n") != std::string::npos);
  CHECK(h100.out.find("  CPU: ok, has 192 logical CPUs, needs 28 cores (8 x (2 + 1) + 4") !=
        std::string::npos);
  CHECK(h100.out.find("  disk: ok") != std::string::npos);

  auto l40s = Gpuprep(Args({"--host", Snapshot("l40sx4-g6e.json")}));
  CHECK(l40s.code == 1);
  CHECK(l40s.out.find("): does not fit, short by ") != std::string::npos);
  CHECK(l40s.out.find("  GPU memory: short, has 48.31 GB per GPU") != std::string::npos);

  auto fleet = Gpuprep(Args({"--host", Snapshot("h100x8-p5.json"), "--host", Snapshot("l40sx4-g6e.json")}));
  CHECK(fleet.code == 1);
  CHECK(fleet.out.find("1 of 2 hosts fit\n") != std::string::npos);
}

TEST_CASE("size --root: a host tree judged with the catalogue's memory", "[size][host]") {
  const std::string root = std::string(GP_FIXTURES) + "/hosts/";
  auto h100 =
      Gpuprep({"--root", root + "healthy-h100", "size", "--model", "llama-3-70b", "--method", "lora"});
  CHECK(h100.code == 0);
  CHECK(h100.out.find("(8x H100 SXM5 80GB, 224 CPUs, ") != std::string::npos);
  CHECK(h100.out.find("): fits\n") != std::string::npos);
  CHECK(h100.out.find("memory from the catalogue (nvidia-smi: ") != std::string::npos);
  CHECK(h100.out.find("  disk: unknown, needs ") != std::string::npos);
  auto l40s = Gpuprep(
      {"--root", root + "secure-boot-unsigned", "size", "--model", "llama-3-70b", "--method", "lora"});
  CHECK(l40s.code == 1);
  CHECK(l40s.out.find("(1x L40S, 32 CPUs, ") != std::string::npos);
  CHECK(l40s.out.find("needs 247.51 GB per GPU (ddp on 1 GPU;") != std::string::npos);
}

TEST_CASE("size --host --json: the verdicts", "[size][host]") {
  auto r =
      Gpuprep(Args({"--json", "--host", Snapshot("h100x8-p5.json"), "--host", Snapshot("l40sx4-g6e.json")}));
  REQUIRE(r.code == 1);
  const json j = json::parse(r.out);
  REQUIRE(j["hosts"].size() == 2);
  const json& h100 = j["hosts"][0];
  CHECK(h100["fits"] == true);
  CHECK(h100["gpu_memory_bytes"] == 81559LL << 20);
  CHECK(h100["shortfall_bytes_per_gpu"] == 0);
  const json& l40s = j["hosts"][1];
  CHECK(l40s["fits"] == false);
  CHECK(l40s["shortfall_bytes_per_gpu"].get<int64_t>() > 0);
  CHECK(l40s["option"]["gpus"] == 4);
  // The shortfall is the closest layout's need minus the board's memory.
  CHECK(l40s["option"]["per_gpu_bytes"].get<int64_t>() - l40s["gpu_memory_bytes"].get<int64_t>() ==
        l40s["shortfall_bytes_per_gpu"].get<int64_t>());
  CHECK(j["servers"]["boards"].is_array());
}

TEST_CASE("size: the servers that fit, with prices", "[size][host]") {
  gp::test::TempRoot dir;
  const std::string prices = dir.path() + "/prices.yaml";
  std::ofstream(prices) << "apiVersion: gpuprep/v1\nkind: Prices\nmetadata: {name: my-cloud}\ncurrency: USD\n"
                           "prices:\n  - {gpu: \"H100 SXM5 80GB\", per_gpu_hour: 2.50}\n";
  auto r = Gpuprep(Args({"--prices", prices}));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("SERVERS THAT FIT") != std::string::npos);
  CHECK(r.out.find("PER HOUR / MONTH USD") != std::string::npos);
  auto j = Gpuprep(Args({"--json", "--prices", prices}));
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc["servers"]["currency"] == "USD");
  bool seen = false;
  for (const json& b : doc["servers"]["boards"])
    if (b["board"] == "H100 SXM5 80GB") {
      seen = true;
      const int gpus = b["option"]["gpus"];
      CHECK(b["cost"]["per_hour"].get<double>() == Approx(2.5 * gpus));
      CHECK(b["cost"]["per_month"].get<double>() == Approx(2.5 * gpus * 730));
    } else {
      CHECK(b["cost"].is_null());
    }
  CHECK(seen);
  auto v = Gpuprep({"manifest", "validate", prices});
  CHECK(v.code == 0);
}

TEST_CASE("size: hostile price files and snapshots, one line, exit 2", "[size][host]") {
  gp::test::TempRoot dir;
  const std::string prices = dir.path() + "/prices.yaml";
  std::ofstream(prices) << "apiVersion: gpuprep/v1\nkind: Prices\nmetadata: {name: my-cloud}\ncurrency: USD\n"
                           "prices:\n  - {gpu: \"H100X\", per_gpu_hour: 2.50}\n";
  auto r = Gpuprep(Args({"--prices", prices}));
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("gpuprep: error: " + prices + ":6:11: unknown GPU \"H100X\"", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  auto v = Gpuprep({"manifest", "validate", prices});
  CHECK(v.code == 2);
  CHECK(v.err.find(prices + ":6:11: unknown GPU") != std::string::npos);

  const std::string snap = dir.path() + "/host.json";
  std::ofstream(snap) << "{\"host\": {\"cpus\": \"many\"}}\n";
  auto s = Gpuprep(Args({"--host", snap}));
  CHECK(s.code == 2);
  CHECK(s.out.empty());
  CHECK(s.err.rfind("gpuprep: error: " + snap + ":1:", 0) == 0);
  CHECK(std::count(s.err.begin(), s.err.end(), '\n') == 1);

  auto both = Gpuprep(Args({"--prices", prices, "--price-per-gpu-hour", "2"}));
  CHECK(both.code == 2);
  auto flat = Gpuprep(Args({"--price-per-gpu-hour", "-2"}));
  CHECK(flat.code == 2);
  CHECK(flat.err.rfind("gpuprep: error: --price-per-gpu-hour: ", 0) == 0);
}

TEST_CASE("size --host: a lower bound that fits is unknown, not a fit", "[size][host]") {
  auto r = Gpuprep({"size", "--params", "1e9", "--micro-batch", "16", "--host", Snapshot("h100x8-p5.json")});
  CHECK(r.code == 1);
  CHECK(r.out.find("): unknown\n") != std::string::npos);
  CHECK(r.out.find("  GPU memory: unknown, has ") != std::string::npos);
  CHECK(r.out.find("the need is a lower bound (activations not estimated)") != std::string::npos);
}
