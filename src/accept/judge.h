// The verdicts of `gpuprep accept` (docs/accept.md): each measurement of a recording against the expectation
// table (typical, floor, physical peak), the outlier rule between the GPUs of one server, the links, and the
// inventory against the offer. Pure: plain values in, plain values out.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accept/record.h"
#include "accept/table.h"

namespace gp::accept {

enum class Status { kPass, kWarn, kFail, kSkipped, kNotApplicable, kInvalid, kNoExpectation };
// "pass", "warn", "fail", "skipped", "not applicable", "invalid-measurement", "no expectation"
const char* StatusName(Status s);

// A storage floor the offer gives for a directory (`storage=/data:2GB/s`), in bytes per second.
struct StorageFloor {
  std::string path;
  double bytes_per_s = 0;
  std::string text;  // the rate as written ("2GB/s")
};

// What the offer promised (--expect): zero or empty where the offer says nothing.
struct Offer {
  int gpus = 0;
  std::string board;                 // as the user wrote it (a board name or a PCI id)
  std::vector<std::string> pci_ids;  // the catalogue's ids for it
  uint64_t board_mib = 0;            // the catalogue's usable memory of that board (0: not known)
  int64_t cpus = 0;
  uint64_t ram_bytes = 0;
  int nvme_count = 0;
  uint64_t nvme_bytes = 0;  // each
  std::vector<StorageFloor> storage;
};

// A device matches a stated size when it has at least this share of it (marketed against usable sizes).
inline constexpr double kSizeMatch = 0.95;

struct Check {
  std::string group;  // inventory | links | compute | memory | host-device | peer | collective | storage
  std::string name;   // "matmul_bf16", "pcie", "gpu count"...
  int gpu = -1, peer = -1;
  std::optional<double> measured;
  std::string unit;
  std::string found;     // for checks that are not one figure ("Gen4 x8", "7 GPUs")
  std::string expected;  // likewise ("Gen5 x16")
  std::optional<Value> typical, floor, peak;
  uint64_t size = 0;  // all_reduce: the message size measured
  // storage: the directory measured (as given), how the file was opened, and the bytes written and read
  std::string path, io;
  uint64_t bytes = 0;
  Status status = Status::kPass;
  std::string reason;
};

struct Options {
  double outlier_pct = 10;  // --outlier: a GPU more than this below the median of its peers fails
  std::optional<Offer> offer;
  // NVLink links per GPU by PCI device id, from the GPU catalogue (catalogue_links.h); a board absent here
  // gets "links: not judged".
  std::map<std::string, Value> nvlink_links;
};

struct Result {
  std::vector<Check> checks;
  std::string verdict;  // pass | incomplete | fail
  int failed = 0, warned = 0, incomplete = 0;
};

// Judges a recording. The board, GPU count and topology the table is read for are the recording's (the
// first GPU's PCI device id; a server with mixed boards has no expectation).
Result Judge(const Recording& rec, const Table& table, const Options& options);
// Counts the checks' statuses into failed, warned, incomplete and the verdict (after checks were added).
void Tally(Result& r);

// 0 when nothing failed; 1 when something failed, or (strict) when a check was skipped or had no expectation.
int ExitCodeFor(const Result& r, bool strict);

// One measurement against its levels: invalid above the peak, no expectation without typical and floor, fail
// below the floor or as an outlier (median: of its peers, when judged), warn below typical, else pass.
Status JudgeValue(double measured, const Value* typical, const Value* floor, const Value* peak,
                  std::optional<double> median, double outlier_pct, std::string* reason);

}  // namespace gp::accept
