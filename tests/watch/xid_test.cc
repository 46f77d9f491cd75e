// Xid events during a watch run: the kernel log followed from the run's start (sys/kernel_log.h), each
// event given to the GPU its PCI address names (watch/xid.h), written and read back in the sample records,
// and its health code (doctor's) on the window's verdicts.
#include "watch/xid.h"

#include <catch2/catch.hpp>
#include <fstream>

#include "apply/harness.h"
#include "sys/kernel_log.h"
#include "util/error.h"
#include "watch/jsonl.h"
#include "watch/judge.h"
#include "watch/prom.h"
#include "watch/synthetic.h"

using namespace gp;

namespace {

void Append(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::app | std::ios::binary);
  f << text;
}

std::vector<watch::GpuSample> TwoGpus() {
  std::vector<watch::GpuSample> g(2);
  g[0].id = {0, "GPU-a", "00000000:18:00.0"};
  g[1].id = {1, "GPU-b", "00000000:29:00.0"};
  return g;
}

}  // namespace

TEST_CASE("kernel log follower: only what is written after Open, whole lines", "[watch][xid]") {
  test::TempRoot t;
  t.Write("/kmsg", "6,1,100,-;before the run\n");
  sys::KmsgFollower f;
  REQUIRE(f.Open(t.fs().HostPath("/kmsg")).empty());
  auto r = f.ReadNew(1 << 20);
  CHECK(r.ok);
  CHECK(r.data.empty());
  Append(t.fs().HostPath("/kmsg"), "6,2,200,-;one\n6,3,3");  // the second record is half written
  r = f.ReadNew(1 << 20);
  CHECK(r.data == "6,2,200,-;one\n");
  Append(t.fs().HostPath("/kmsg"), "00,-;two\n");
  r = f.ReadNew(1 << 20);
  CHECK(r.data == "6,3,300,-;two\n");
  sys::KmsgFollower none;
  CHECK(none.Open(t.fs().HostPath("/missing")).rfind("cannot read ", 0) == 0);
  CHECK_FALSE(none.IsOpen());
  sys::KmsgFollower dir;
  CHECK(dir.Open(t.path()).find("not the kernel log device or a regular file") != std::string::npos);
}

TEST_CASE("Xid events: each to the GPU its address names, bounded, others counted", "[watch][xid]") {
  CHECK(watch::SamePciDevice("00000000:18:00.0", "0000:18:00"));
  CHECK(watch::SamePciDevice("00000001:C1:00.0", "0001:c1:00"));
  CHECK_FALSE(watch::SamePciDevice("00000000:18:00.0", "0000:19:00"));
  CHECK_FALSE(watch::SamePciDevice("00000000:18:00.0", "0001:18:00"));
  CHECK_FALSE(watch::SamePciDevice("garbage", "0000:18:00"));
  CHECK_FALSE(watch::SamePciDevice("00000000:18:00.0", "0000:18"));

  auto gpus = TwoGpus();
  const std::string records =
      "4,10,5000000,-;NVRM: Xid (PCI:0000:29:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"
      " SUBSYSTEM=pci\n"
      "4,11,5000100,-;NVRM: Xid (PCI:0000:18:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception\n"
      "4,12,5000200,-;NVRM: Xid (PCI:0000:99:00): 79, pid=1, name=x, not watched\n"
      "6,13,5000300,-;NVRM: loading NVIDIA UNIX Open Kernel Module\n"
      "4,14,5000400,-;NVRM: Xid (PCI:0000:29:00): 0, a code of zero is no Xid\n"
      "garbage without a header\n";
  const auto a = watch::AttachXids(records, gpus);
  CHECK(a.matched == 2);
  CHECK(a.unmatched == 1);
  REQUIRE(gpus[1].xids.size() == 1);
  CHECK(gpus[1].xids[0].xid == 79);
  CHECK(gpus[1].xids[0].pid == "4242");
  CHECK(gpus[1].xids[0].process == "python3");
  CHECK(gpus[1].xids[0].detail == "GPU has fallen off the bus.");
  REQUIRE(gpus[0].xids.size() == 1);
  CHECK(gpus[0].xids[0].xid == 13);
  CHECK(gpus[0].xids[0].pid.empty());

  auto flood = TwoGpus();
  std::string many;
  for (int i = 0; i < 40; ++i) many += "4,1,1,-;NVRM: Xid (PCI:0000:18:00): 94, pid=1, name=x, d\n";
  const auto b = watch::AttachXids(many, flood);
  CHECK(flood[0].xids.size() == watch::kMaxXidsPerGpuTick);
  CHECK(b.dropped == 40 - watch::kMaxXidsPerGpuTick);
}

TEST_CASE("Xid events: in the sample record and back; doctor's code on the window's verdicts",
          "[watch][xid]") {
  auto window = test::Window(2, 4, [](watch::GpuSample& g, int i, unsigned u) {
    if (u == 1 && i == 2) g.xids.push_back({79, "4242", "python3", "GPU has fallen off the bus."});
  });
  const std::string line = watch::SampleJson(window[2]).dump();
  CHECK(line.find(R"("xids":[{"xid":79,"code":"gpu.xid-hardware","pid":"4242","process":"python3",)") !=
        std::string::npos);
  CHECK(watch::SampleJson(window[1]).dump().find("xids") == std::string::npos);  // the shape of old records
  const watch::Record r = watch::ParseRecord(line, "rec.jsonl", 1);
  CHECK(watch::SampleJson(r.sample).dump() == line);

  auto refused = [&](const std::string& from, const std::string& to) {
    std::string s = line;
    s.replace(s.find(from), from.size(), to);
    try {
      watch::ParseRecord(s, "rec.jsonl", 1);
    } catch (const FileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(refused(R"("xid":79)", R"("xid":0)") == "rec.jsonl:1:1: gpus[1].xids[0].xid: out of range");
  CHECK(refused(R"("xid":79)", R"("xid":"79")") ==
        "rec.jsonl:1:1: gpus[1].xids[0].xid: must be an unsigned integer");
  CHECK(refused(R"("process":"python3")", R"("process":"py\u001b[2Jthon")") ==
        "rec.jsonl:1:1: gpus[1].xids[0].process: printable ASCII only");

  watch::Judge judge({}, 2000);
  std::vector<watch::Verdict> verdicts;
  for (auto& s : window) {
    auto v = judge.Add(s);
    verdicts.insert(verdicts.end(), v.begin(), v.end());
  }
  auto last = judge.Finish(window.back().time_ms + 1000);
  verdicts.insert(verdicts.end(), last.begin(), last.end());
  bool gpu1_coded = false;
  for (const auto& v : verdicts) {
    const bool has =
        std::find(v.health_codes.begin(), v.health_codes.end(), "gpu.xid-hardware") != v.health_codes.end();
    if (v.gpu.index == 0) CHECK_FALSE(has);
    gpu1_coded = gpu1_coded || (v.gpu.index == 1 && has);
  }
  CHECK(gpu1_coded);
  const auto& notes = judge.GetSummary().notes;
  CHECK(std::count_if(notes.begin(), notes.end(), [](const std::string& n) {
          return n.rfind("GPU 1 logged Xid 79 (GPU has fallen off the bus) at ", 0) == 0;
        }) == 1);

  watch::PromState prom;
  CHECK(prom.AddXids(window[2].gpus[1]));
  CHECK_FALSE(prom.AddXids(window[2].gpus[0]));
  const std::string text = prom.Render(true);
  CHECK(text.find(R"(gpuprep_watch_gpu_xid_events_total{gpu="1",)") != std::string::npos);
  CHECK(text.find(R"(,xid="79",code="gpu.xid-hardware"} 1)") != std::string::npos);
  CHECK(text.find(R"(gpuprep_watch_gpu_health{gpu="1",)") != std::string::npos);
}
