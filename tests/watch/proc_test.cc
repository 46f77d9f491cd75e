// The /proc and cgroup parsers on the kernel's formats, and on what they must refuse.
#include "watch/proc.h"

#include <catch2/catch.hpp>

using namespace gp::watch;

TEST_CASE("ParseTaskStat: comm with spaces and parentheses, fields 3, 4, 14, 15", "[watch][proc]") {
  auto t =
      ParseTaskStat("4711 (my (odd) name) R 1 4711 4711 0 -1 4194560 10 0 0 0 123 45 0 0 20 0 7 0 100 1 2\n");
  REQUIRE(t);
  CHECK(t->pid == 4711);
  CHECK(t->comm == "my (odd) name");
  CHECK(t->state == 'R');
  CHECK(t->ppid == 1);
  CHECK(t->utime == 123);
  CHECK(t->stime == 45);
  CHECK_FALSE(ParseTaskStat("4711 (x) R 1 2"));  // truncated
  CHECK_FALSE(ParseTaskStat("abc (x) R 1 4711 4711 0 -1 4194560 10 0 0 0 123 45"));
  CHECK_FALSE(ParseTaskStat(""));
}

TEST_CASE("ParseProcStat: per-core busy and total, procs_blocked", "[watch][proc]") {
  auto s = ParseProcStat(
      "cpu  10 0 10 100 5 0 0 0 0 0\ncpu0 4 1 2 50 3 1 1 1 0 0\ncpu1 6 0 8 50 2 0 0 0 0 0\nprocs_blocked "
      "2\n");
  REQUIRE(s);
  REQUIRE(s->cpus.size() == 2);
  CHECK(s->cpus[0].busy == 4 + 1 + 2 + 1 + 1 + 1);  // user nice system irq softirq steal
  CHECK(s->cpus[0].total == s->cpus[0].busy + 50 + 3);
  CHECK(s->procs_blocked == 2u);
  CHECK_FALSE(ParseProcStat("cpu0 1 2 3\n"));  // no total line
  CHECK_FALSE(ParseProcStat("cpu 1 2 3 4\ncpu0 x 2 3 4\n"));
}

TEST_CASE("ParsePressure, Cpus_allowed_list, cgroup files", "[watch][proc]") {
  auto p = ParsePressure(
      "some avg10=1.50 avg60=0.00 avg300=0.00 total=10\nfull avg10=0.25 avg60=0 avg300=0 total=1\n");
  REQUIRE(p);
  CHECK(*p->some_avg10 == Approx(1.5));
  CHECK(*p->full_avg10 == Approx(0.25));
  CHECK_FALSE(ParsePressure("garbage"));
  CHECK_FALSE(ParsePressure("some avg10=-1 avg60=0"));
  CHECK(CpusAllowedFromStatus("Name:\tx\nCpus_allowed_list:\t0-3,8,10-11\n") == 7u);
  CHECK_FALSE(CpusAllowedFromStatus("Cpus_allowed_list:\t3-1\n"));
  CHECK_FALSE(CpusAllowedFromStatus("Name:\tx\n"));
  auto cg = ParseProcCgroup("12:memory:/a\n4:cpu,cpuacct:/job/x\n0::/unified/y\n");
  CHECK(cg.v1_cpu == std::string("/job/x"));
  CHECK(cg.v2 == std::string("/unified/y"));
  CHECK_FALSE(ParseProcCgroup("0::/a/../../etc\n").v2);  // never climbs
  CHECK(ParseCpuMax("150000 100000\n") == Approx(1.5));
  CHECK_FALSE(ParseCpuMax("max 100000\n"));
  CHECK_FALSE(ParseCpuMax("1 0\n"));
  CHECK(CpuLimitV1("200000\n", "100000\n") == Approx(2.0));
  CHECK_FALSE(CpuLimitV1("-1\n", "100000\n"));
  auto v2 = ParseCpuStat("usage_usec 5\nnr_throttled 3\nthrottled_usec 1200\n");
  CHECK(v2.nr_throttled == 3u);
  CHECK(v2.throttled_us == 1200u);
  CHECK(ParseCpuStat("nr_throttled 1\nthrottled_time 5000000\n").throttled_us == 5000u);
}
