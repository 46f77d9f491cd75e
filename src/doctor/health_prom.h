// doctor --health --prometheus FILE: the health verdict as a node_exporter textfile, in the Prometheus text
// exposition format (https://prometheus.io/docs/instrumenting/exposition_formats/) and the textfile
// collector's convention (https://github.com/prometheus/node_exporter#textfile-collector: no client
// timestamps). Every name starts with gpuprep_health_, so it never repeats a series of watch's textfile
// (gpuprep_watch_*) in the same directory. A GPU's labels are watch's (gpu, UUID, pci_bus_id, modelName:
// here the index, NVML's UUID when it answered, the PCI address and the board's name in gpuprep's
// catalogue); a finding adds class, code and status. Every label value is escaped (util's
// PrometheusLabelValue). Pure: the CLI writes the text (atomically, beside the file and renamed).
#pragma once
#include <string>
#include <vector>

#include "doctor/health.h"
#include "probe/host.h"

namespace gp::doctor {

struct HealthRunTimes {
  long long end_ms = 0;       // when the checks ended (Unix time, ms)
  long long duration_ms = 0;  // how long the probe and the checks took
};

// The whole file for verdict `v` of `host` over `classes` (empty: every class).
std::string HealthProm(const HealthVerdict& v, const probe::HostFacts& host,
                       const std::vector<std::string>& classes, const HealthRunTimes& times);

}  // namespace gp::doctor
