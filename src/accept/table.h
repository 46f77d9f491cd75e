// The expectation table of `gpuprep accept` (manifests/accept/expectations.tsv, embedded): per board (PCI
// device id), GPU count and topology, each quantity's typical value, floor and physical peak. Every value is
// one of three kinds: quoted (a figure with its source and a committed excerpt of that source, where the
// figure must appear on the quoted line), derived (a rule over another value of the same row, written out:
// "0.9 x typical") or measured (a committed recording). Loaded and checked at build time by
// tools/accept_table_check.cc, the same loader the binary runs. Pure: no I/O.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::accept {

struct Value {
  int line = 0;          // in the table file
  std::string device;    // "0x2330", or "*" (a peak for every board, e.g. a PCIe generation's)
  int gpus = 0;          // 0: any count
  std::string topology;  // nvswitch | nvlink-bridge | pcie | *
  std::string quantity;  // matmul_bf16 | hbm_copy | h2d_gen4 | h2d_gen5 | d2h_gen4 | d2h_gen5 | p2p |
                         // all_reduce; nvlink_links for the catalogue's links per GPU (catalogue_links.h)
  std::string level;     // typical | floor | peak
  double value = 0;      // derived values are computed when the table is loaded
  std::string text;      // the figure as the table writes it ("" for derived)
  std::string unit;      // TFLOP/s | TB/s | GB/s; links for the catalogue's links per GPU
  uint64_t size = 0;     // all_reduce: the message size the source measured at (bytes); else 0
  std::string kind;      // quoted | derived | measured
  std::string source;    // quoted: repo@commit:path:line or a URL and its table; derived: the rule;
                         // measured: the recording
  std::string excerpt;   // quoted: the excerpt file beside the table; else ""
  int source_line = 0;   // quoted repo@commit:path:line: the line number; else 0
};

struct Table {
  std::vector<Value> values;
  // The value for this board, count, topology, quantity and level: an exact row first; for a peak, also a
  // row for any count and topology, then one for every board. nullptr when the table has none.
  const Value* Find(const std::string& device, int gpus, const std::string& topology,
                    const std::string& quantity, const std::string& level) const;
  // Whether the table has any typical or floor row for this board, count and topology.
  bool HasBoard(const std::string& device, int gpus, const std::string& topology) const;
};

// Parses the table (named `path` in errors): throws FileError PATH:LINE:COL for a bad row, an unquoted
// figure, a rule that names no value, or a duplicate row.
Table LoadTable(std::string_view text, const std::string& path);

// Each quoted value against its excerpt: the excerpt exists, is at most 1 KiB, names the source's
// repo@commit:path on its first line, and the quoted line holds the figure as a whole number token.
// Returns one message per problem ("" when none). `read` returns an excerpt file's text.
std::vector<std::string> CheckExcerpts(
    const Table& t, const std::function<std::optional<std::string>(const std::string& name)>& read);

// The embedded table (parsed once; the build refused a broken one).
const Table& EmbeddedTable();

inline constexpr const char* kTablePath = "manifests/accept/expectations.tsv";

}  // namespace gp::accept
