// The fleet report: many hosts' `gpuprep doctor --json` snapshots turned into one value (hosts x layers,
// and every warn/fail finding grouped by its stable code with the hosts it hit and its fix once).
// Parsing validates each document where it enters; renderers (render.h) are pure functions of the value.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace gp::fleet {

struct GpuId {
  std::string pci, name, uuid, serial;  // uuid/serial "" when NVML did not give them
};

struct HostFinding {
  std::string layer, status, code, message, fix;  // status "warn" | "fail"; fix "" when none
};

struct Host {
  std::string label;  // what the report shows: hostname, else the machine-id's first 12 digits, else the
                      // file's name
  std::string file;   // the snapshot as given on the command line
  std::string hostname, machine_id;
  std::string os;        // "ubuntu 22.04"
  std::string manifest;  // the stack doctor checked against
  std::vector<GpuId> gpus;
  std::map<std::string, std::string> layers;  // layer -> "ok" | "warn" | "fail" | "skip"
  std::vector<HostFinding> findings;          // warn and fail only, in the snapshot's order
  std::string worst = "ok";                   // "fail" | "warn" | "ok"
};

// Field by field (the two snapshot readers are tested to give the same Host).
inline bool operator==(const GpuId& a, const GpuId& b) {
  return a.pci == b.pci && a.name == b.name && a.uuid == b.uuid && a.serial == b.serial;
}
inline bool operator==(const HostFinding& a, const HostFinding& b) {
  return a.layer == b.layer && a.status == b.status && a.code == b.code && a.message == b.message &&
         a.fix == b.fix;
}
inline bool operator==(const Host& a, const Host& b) {
  return a.label == b.label && a.file == b.file && a.hostname == b.hostname && a.machine_id == b.machine_id &&
         a.os == b.os && a.manifest == b.manifest && a.gpus == b.gpus && a.layers == b.layers &&
         a.findings == b.findings && a.worst == b.worst;
}

struct Group {
  std::string code;                   // the finding's code; "<layer>.uncoded" for snapshots from before codes
  std::string layer, status;          // worst status over the hosts
  std::vector<std::string> hosts;     // labels, in report order
  std::vector<std::string> messages;  // distinct messages (at most 5)
  std::vector<std::string> fixes;     // distinct fixes (the fix, once)
};

struct Report {
  std::vector<Host> hosts;               // in the order given
  std::vector<std::string> layers;       // columns: the canonical layer order, those any host reported
  std::vector<Group> groups;             // fail before warn, then most hosts first, then by code
  int failing = 0, warning = 0, ok = 0;  // hosts by worst status
};

// One snapshot's text, read by the fast reader, else by the reference (fleet/snapshot.h). Throws FileError
// "PATH:LINE:COL: message" (exit 2) when it is not a doctor document.
Host ParseSnapshot(const std::string& text, const std::string& display_path);

// Labels made unique (a repeated hostname gets " (file)"), groups built, columns chosen.
Report BuildReport(std::vector<Host> hosts);

// 0 when no host fails, 1 otherwise (like doctor).
int ExitCodeFor(const Report& r);

}  // namespace gp::fleet
