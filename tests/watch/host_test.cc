// The host side of watch over fixture /proc trees (tests/fixtures/proc/make.py): two instants one second
// apart, read through the same Fs seam the live host is.
#include "watch/host.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "support/map_fs.h"
#include "support/temp_dir.h"
#include "sys/fs.h"

using namespace gp;

namespace {

// A fixture /proc tree (tests/fixtures/proc/NAME/INSTANT) in memory: the "host" at one instant.
test::MapFs ProcInstant(const std::string& name, const std::string& instant) {
  test::MapFs fs;
  fs.LoadTree(std::string(GP_FIXTURES) + "/proc/" + name + "/" + instant);
  return fs;
}

const watch::HostProcess* Find(const watch::HostSample& h, unsigned pid) {
  for (const auto& p : h.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

// The host moves from t0 to t1 between the two ticks: the same Fs, its files replaced.
struct TwoInstants {
  test::MapFs fs;
  watch::HostSampler sampler;
  watch::HostSample first, second;
  explicit TwoInstants(const std::string& name)
      : fs(ProcInstant(name, "t0")), sampler(fs, watch::HostSamplerOptions{100, 10000, 5000}) {
    const std::map<unsigned, std::vector<unsigned>> gpu_pids = {{100, {0}}, {4242, {1}}};
    first = sampler.Sample(0, gpu_pids);
    fs = ProcInstant(name, "t1");
    second = sampler.Sample(1000, gpu_pids);
  }
};

}  // namespace

TEST_CASE("HostSampler: CPU per core, PSI and D-state tasks from /proc (cgroup v2)", "[watch][host]") {
  TwoInstants h("loader-v2");
  CHECK(h.first.cpu_count == 4);
  CHECK(h.first.cpu_busy_pct.empty());  // no interval yet
  REQUIRE(h.second.cpu_busy_pct.size() == 4);
  CHECK(h.second.cpu_busy_pct[0] == Approx(95));
  CHECK(h.second.cpu_busy_pct[2] == Approx(10));
  CHECK(h.second.cpu_busy_pct[3] == Approx(0));
  CHECK(h.second.procs_blocked == 1u);
  REQUIRE(h.second.pressure);
  CHECK(h.second.pressure->cpu_some_avg10 == Approx(35.10));
  CHECK(h.second.pressure->io_full_avg10 == Approx(1.10));
  // NVML's PID 4242 is not in this pid namespace: a container-like case.
  CHECK(h.second.unattributed_pids == std::vector<unsigned>{4242});
}

TEST_CASE("HostSampler: the GPU process, its pt_data_worker loaders and their descendants", "[watch][host]") {
  TwoInstants h("loader-v2");
  const auto* gpu = Find(h.second, 100);
  const auto* w0 = Find(h.second, 200);
  const auto* w1 = Find(h.second, 201);
  const auto* grandchild = Find(h.second, 202);
  REQUIRE(gpu);
  REQUIRE(w0);
  REQUIRE(w1);
  REQUIRE(grandchild);
  CHECK(Find(h.second, 300) == nullptr);  // unrelated sshd is not read
  CHECK(gpu->role == watch::ProcessRole::kGpu);
  CHECK(w0->role == watch::ProcessRole::kLoader);
  CHECK(grandchild->role == watch::ProcessRole::kChild);
  CHECK(grandchild->gpus == std::vector<unsigned>{0});  // inherited through the loader
  CHECK(w0->cpu_pct == Approx(98));                     // 98 ticks at 100 Hz in 1 s
  CHECK(w1->cpu_pct == Approx(96));
  CHECK(w1->state == 'D');
  CHECK(gpu->cpu_pct == Approx(90));
  CHECK(gpu->main_thread_cpu_pct == Approx(90));
  CHECK(w0->cpus_allowed == 2u);
  // cgroup v2: the job's cpu.max "200000 100000" binds (its parent has "max"); throttling since t0.
  CHECK(gpu->cgroup_cpu_limit == Approx(2.0));
  CHECK(gpu->cgroup_nr_throttled == 7u);
  CHECK(gpu->cgroup_throttled_ms == Approx(120));
  // All threads of the GPU process were read on the first tick (then every 5 s).
  REQUIRE(h.first.processes.size() >= 1);
  const auto* first_gpu = Find(h.first, 100);
  REQUIRE(first_gpu);
  REQUIRE(first_gpu->threads.size() == 2);
  CHECK(first_gpu->threads[1].comm == "pt_data_pin");
  CHECK(gpu->threads.empty());  // 1 s later: not yet
}

TEST_CASE("HostSampler: cgroup v1 quota and throttled_time, no PSI", "[watch][host]") {
  TwoInstants h("loader-v1");
  CHECK_FALSE(h.second.pressure);
  const auto* gpu = Find(h.second, 100);
  REQUIRE(gpu);
  CHECK(gpu->cgroup_cpu_limit == Approx(1.5));  // cfs_quota 150000 / period 100000
  CHECK(gpu->cgroup_nr_throttled == 3u);
  CHECK(gpu->cgroup_throttled_ms == Approx(2000));  // throttled_time is in ns
  // No children lists in this tree: the loaders were found from every process's parent instead.
  REQUIRE(Find(h.second, 202));
  CHECK(Find(h.second, 202)->gpus == std::vector<unsigned>{0});
  CHECK(Find(h.second, 201)->role == watch::ProcessRole::kLoader);
  CHECK(Find(h.second, 300) == nullptr);
}

TEST_CASE("HostSampler: a PID visible here, one not", "[watch][host]") {
  sys::DiskFs fs(std::string(GP_FIXTURES) + "/proc/loader-v2/t0");
  watch::HostSampler s(fs, {});
  CHECK(s.PidVisible(100));
  CHECK_FALSE(s.PidVisible(4242));
}

TEST_CASE("HostSampler: in a child pid namespace no NVML PID is attributed, even one that exists",
          "[watch][host]") {
  // A tree of its own: /proc/100 exists, and /proc/self/ns/pid names the initial pid namespace or another.
  const test::TempDir dir("gpuprep-pidns");
  const std::string root = dir.path;
  REQUIRE(std::system(("mkdir -p " + root + "/proc/100 " + root + "/proc/self/ns").c_str()) == 0);
  sys::DiskFs fs(root);
  const std::map<unsigned, std::vector<unsigned>> gpu_pids = {{100, {0}}};
  SECTION("no ns link (unknown): /proc decides") {
    CHECK_FALSE(watch::InChildPidNamespace(fs));
    CHECK(watch::HostSampler(fs, {}).Sample(0, gpu_pids).unattributed_pids.empty());
  }
  SECTION("the initial pid namespace") {
    REQUIRE(symlink("pid:[4026531836]", (root + "/proc/self/ns/pid").c_str()) == 0);
    CHECK_FALSE(watch::InChildPidNamespace(fs));
    watch::HostSampler s(fs, {});
    CHECK(s.PidVisible(100));
    CHECK(s.Sample(0, gpu_pids).unattributed_pids.empty());
  }
  SECTION("a container's pid namespace") {
    REQUIRE(symlink("pid:[4026532187]", (root + "/proc/self/ns/pid").c_str()) == 0);
    CHECK(watch::InChildPidNamespace(fs));
    watch::HostSampler s(fs, {});
    CHECK_FALSE(s.PidVisible(100));
    CHECK(s.Sample(0, gpu_pids).unattributed_pids == std::vector<unsigned>{100});
  }
}
