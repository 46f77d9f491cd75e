// NCCL's own log (NCCL_DEBUG=INFO and WARN lines) read into the failures multi-node jobs meet, each with its
// cause and fix (`gpuprep nccl-log`, docs/nccl-log.md). A pure reader: lines in, a Summary out; no file, no
// system. Lines are read as NCCL writes them (src/debug.cc: "[time] host:pid:tid [dev] NCCL INFO ..." and
// "host:pid:tid [dev] file.cc:LINE NCCL WARN ..."), anywhere in a line, so a launcher's prefix ("[rank3]:",
// "0: ") does not hide them; every other line is ignored. The wordings of NCCL 2.x up to 2.30 are known
// (reader.cc names each source).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gp::nccllog {

// Bounds on hostile input: a longer line is not NCCL's (its log buffer is 1024 bytes) and is skipped; the
// CLI stops reading at kMaxBytes and says so.
inline constexpr size_t kMaxLineBytes = 4096;
inline constexpr size_t kMaxBytes = size_t{256} << 20;
// Lines remembered per finding (its first and last are what the report quotes).
inline constexpr size_t kMaxQuoteBytes = 200;

enum class Level { kOk, kInfo, kWarn, kFail };
const char* LevelName(Level l);  // "ok", "info", "warn", "fail"

struct Finding {
  std::string code;  // stable: "nccl-log.<what>"
  Level level = Level::kInfo;
  std::string message;  // what was seen, one sentence
  std::string fix;      // what to do ("" for ok and info)
  size_t first_line = 0, last_line = 0, count = 0;
  std::string quote;  // the first line that raised it, cut to kMaxQuoteBytes, terminal-safe
};

struct Summary {
  size_t lines = 0;        // lines read
  size_t nccl_lines = 0;   // lines with "NCCL INFO" or "NCCL WARN"
  size_t long_lines = 0;   // lines over kMaxLineBytes, skipped
  bool truncated = false;  // the input went past kMaxBytes (set by the caller that stopped reading)
  std::string version;     // "2.28.9" from "NCCL version 2.28.9+cuda13.0"; "" unseen
  std::string bootstrap;   // the bootstrap interface ("eth0"); "" unseen
  std::string network;     // "IB", "Socket", "AWS Libfabric", ...: from "Using network X"; "" unseen
  std::vector<std::string> ib_devices;  // "mlx5_0:1/IB", "mlx5_1:1/RoCE"
  size_t net_channels = 0;              // channel lines over NET
  size_t gdr_channels = 0;              // of those, with /GDRDMA
  std::vector<Finding> findings;        // in the order first seen
};

class Reader {
 public:
  // One line, without its newline (a trailing '\r' is ignored).
  void Line(std::string_view line);
  // The findings that need the whole log (the network chosen, GPUDirect RDMA over the channels); call once.
  Summary Finish();

 private:
  void Add(const std::string& code, Level level, std::string message, std::string fix);
  void Classify(std::string_view body, bool warn);
  // Classify's steps, each a group of rules in the order Classify tries them; true when the line matched one
  // (and nothing later is tried).
  bool ClassifyBootstrap(std::string_view b);
  bool ClassifyIbDevices(std::string_view b);
  bool ClassifyNetwork(std::string_view b);
  bool ClassifyPlugin(std::string_view b, bool warn);
  bool ClassifyIbErrors(std::string_view b);
  Summary s_;
  std::string line_;  // the line being classified, for the quote
  bool plugin_failed_ = false;
  bool ib_unavailable_ = false;
  std::string ifname_;  // NCCL_SOCKET_IFNAME as NCCL logged it
  int nodes_ = 0;       // the largest "nNodes N" of the communicators' init lines; 0 unseen
  size_t other_warns_ = 0;
};

// Whole text at once (tests, the fuzz target): every line through a Reader.
Summary ReadText(std::string_view text);

// The name of an ibv_wc_status value (rdma-core's libibverbs/verbs.h): "IBV_WC_RETRY_EXC_ERR" for 12; ""
// when out of range.
std::string WcStatusName(int status);

}  // namespace gp::nccllog
