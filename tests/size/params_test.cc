// The shipped model table: every row's parameter count, computed from its hyper-parameters, reproduces the
// count its publisher gives (exactly, or to the precision it was published with).
#include <catch2/catch.hpp>

#include "size/model.h"

using namespace gp::size;

TEST_CASE("every model row reproduces its published parameter count", "[size]") {
  int checked = 0;
  for (const auto& a : ModelTable()) {
    if (a.family == Family::kVision) continue;  // the published count is the row's only number
    INFO(a.name << ": computed " << CountParams(a).total << ", published " << a.published_params << " ("
                << a.published_source << ")");
    REQUIRE(a.published_params > 0);
    REQUIRE_FALSE(a.source.empty());
    REQUIRE_FALSE(a.published_source.empty());
    const auto total = static_cast<double>(CountParams(a).total);
    const auto published = static_cast<double>(a.published_params);
    if (a.published_precision == 1)
      CHECK(CountParams(a).total == a.published_params);
    else  // "1.23B": within one unit of the last published digit
      CHECK(std::abs(total - published) <= static_cast<double>(a.published_precision));
    ++checked;
  }
  CHECK(checked == 23);
}

TEST_CASE("parameter counts by part", "[size]") {
  const ParamCounts l = CountParams(*FindModel("llama-2-70b"));
  CHECK(l.total == 68976648192ULL);
  CHECK(l.embedding == 32000ULL * 8192);
  CHECK(l.head == 8192 + 32000ULL * 8192);  // final norm, untied output layer
  REQUIRE(l.groups.size() == 1);
  CHECK(l.groups[0].count == 80);
  CHECK(l.groups[0].params == 855654400ULL);
  CHECK(l.LargestLayer() == 855654400ULL);
  // Tied embeddings have no separate output layer.
  const ParamCounts t = CountParams(*FindModel("llama-3.2-3b"));
  CHECK(t.head == 3072);
  // T5 decoder layers carry cross-attention.
  const ParamCounts t5 = CountParams(*FindModel("t5-small"));
  REQUIRE(t5.groups.size() == 2);
  CHECK(t5.groups[1].linears.size() == t5.groups[0].linears.size() + 4);
}

TEST_CASE("model lookup accepts the names people write", "[size]") {
  for (const char* name :
       {"llama-2-7b", "Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", "llama2_7b", "LLAMA-2-7B"}) {
    INFO(name);
    REQUIRE(FindModel(name) != nullptr);
    CHECK(FindModel(name)->name == "llama-2-7b");
  }
  CHECK(FindModel("Meta-Llama-3-8B")->name == "llama-3-8b");
  CHECK(FindModel("Qwen/Qwen2.5-7B-Instruct")->name == "qwen2.5-7b");
  CHECK(FindModel("llama-9-7b") == nullptr);
  CHECK(FindModel("") == nullptr);
}
