// `watch --replay FILE`: any bytes, line by line -> records or a gp::FileError (PATH:LINE:COL). A sample
// that reads must write back to the same record, and the judge must take any such samples (zero limits,
// huge counters, empty lists) without a crash, a NaN in its JSON or another exception type.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/error.h"
#include "watch/jsonl.h"
#include "watch/judge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gp::watch::Judge judge({}, 2000);
  std::string first_gpus;
  size_t start = 0, number = 0;
  while (start <= text.size() && number < 64) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(start, nl - start);
    start = nl + 1;
    ++number;
    try {
      gp::watch::Record r = gp::watch::ParseRecord(line, "fuzz.jsonl", number);
      if (r.type != gp::watch::Record::Type::kSample) continue;
      const std::string again = gp::watch::SampleJson(r.sample).dump();
      if (gp::watch::SampleJson(gp::watch::ParseRecord(again, "again", 1).sample).dump() != again) std::abort();
      std::string gpus;
      for (const auto& g : r.sample.gpus) gpus += std::to_string(g.id.index) + "/" + g.id.uuid + ",";
      if (first_gpus.empty()) first_gpus = gpus;
      if (gpus != first_gpus) continue;  // the replay refuses such a sample; the judge assumes it never sees one
      for (const auto& v : judge.Add(r.sample)) (void)gp::watch::VerdictJson(v).dump();
    } catch (const gp::Error&) {
    }
  }
  for (const auto& v : judge.Finish(INT64_MAX / 4)) (void)gp::watch::VerdictJson(v).dump();
  (void)gp::watch::SummaryJson(judge.GetSummary()).dump();
  return 0;
}
