// The NCCL log reader (reader.h). Each rule names the NCCL source that prints the line it reads
// (github.com/NVIDIA/nccl, tags v2.27.7-1, v2.28.9-1, v2.30.7-1) or the public issue that recorded an older
// wording. The fixes follow the failures recorded in NCCL's, nccl-tests' and aws-ofi-nccl's issue trackers.
#include "nccllog/reader.h"

#include <iterator>

#include "util/input.h"
#include "util/strings.h"

namespace gp::nccllog {
namespace {

// rdma-core libibverbs/verbs.h, enum ibv_wc_status, in order.
constexpr const char* kWcStatus[] = {"IBV_WC_SUCCESS",           "IBV_WC_LOC_LEN_ERR",
                                     "IBV_WC_LOC_QP_OP_ERR",     "IBV_WC_LOC_EEC_OP_ERR",
                                     "IBV_WC_LOC_PROT_ERR",      "IBV_WC_WR_FLUSH_ERR",
                                     "IBV_WC_MW_BIND_ERR",       "IBV_WC_BAD_RESP_ERR",
                                     "IBV_WC_LOC_ACCESS_ERR",    "IBV_WC_REM_INV_REQ_ERR",
                                     "IBV_WC_REM_ACCESS_ERR",    "IBV_WC_REM_OP_ERR",
                                     "IBV_WC_RETRY_EXC_ERR",     "IBV_WC_RNR_RETRY_EXC_ERR",
                                     "IBV_WC_LOC_RDD_VIOL_ERR",  "IBV_WC_REM_INV_RD_REQ_ERR",
                                     "IBV_WC_REM_ABORT_ERR",     "IBV_WC_INV_EECN_ERR",
                                     "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
                                     "IBV_WC_RESP_TIMEOUT_ERR",  "IBV_WC_GENERAL_ERR"};

constexpr const char* kCheckPortsFix =
    "on every node, check that the RDMA ports are ACTIVE and, on RoCE, that each has a RoCE v2 GID on the "
    "subnet the peers route to (gpuprep doctor shows both in its network layer); exclude ports that are not "
    "cabled to the other nodes with NCCL_IB_HCA";

// `s` after `word` when it starts with `word` followed by " : " or ": " (NCCL wrote both: "Bootstrap : Using"
// up to 2.23, "Bootstrap: Using" from 2.26).
bool After(std::string_view s, std::string_view word, std::string_view rest, std::string_view& out) {
  if (!StartsWith(s, word)) return false;
  s.remove_prefix(word.size());
  if (StartsWith(s, " : "))
    s.remove_prefix(3);
  else if (StartsWith(s, ": "))
    s.remove_prefix(2);
  else
    return false;
  if (!StartsWith(s, rest)) return false;
  out = s.substr(rest.size());
  return true;
}

// The leading decimal number of `s` (up to 9 digits); -1 when none.
int LeadingInt(std::string_view s) {
  int v = 0, n = 0;
  while (n < static_cast<int>(s.size()) && n < 9 && s[n] >= '0' && s[n] <= '9') v = v * 10 + (s[n++] - '0');
  return n == 0 ? -1 : v;
}

// "[0]eth0:10.0.0.1<0>" or "eth0:10.0.0.1<0>" -> "eth0".
std::string InterfaceOf(std::string_view s) {
  s = Trim(s);
  if (StartsWith(s, "[")) {
    auto close = s.find(']');
    if (close == std::string_view::npos) return "";
    s.remove_prefix(close + 1);
  }
  auto end = s.find_first_of(": <");
  return std::string(s.substr(0, end == std::string_view::npos ? s.size() : end).substr(0, 64));
}

bool IsLoopback(const std::string& i) { return i == "lo"; }
bool IsBridge(const std::string& i) { return StartsWith(i, "docker") || StartsWith(i, "virbr"); }

// The ibv_wc_status of a completion error: "with error 12" (up to 2.18), "with status=12" (2.19 on),
// "status=IBV_WC_RETRY_EXC_ERR(12)" (2.27 on); -1 when none is found.
int CompletionStatus(std::string_view body) {
  if (auto p = body.find("with error "); p != std::string_view::npos) return LeadingInt(body.substr(p + 11));
  auto p = body.find("status=");
  if (p == std::string_view::npos) return -1;
  std::string_view v = body.substr(p + 7);
  if (int n = LeadingInt(v); n >= 0) return n;
  auto open = v.find('(');
  auto space = v.find(' ');
  if (open == std::string_view::npos || (space != std::string_view::npos && space < open)) return -1;
  return LeadingInt(v.substr(open + 1));
}

std::string CompletionFix(int status) {
  switch (status) {
    case 12:  // the peer never acknowledged: GID/routing, a port down, or the peer gone (nccl#426, nccl#769)
    case 20:
      return std::string(kCheckPortsFix) +
             "; with NCCL older than 2.21 set NCCL_IB_GID_INDEX to the RoCE v2 GID's index; if one rank "
             "exited first, read its log: this error follows it";
    case 13:
      return "the receiver had no buffer posted: usually a rank that stopped (read the other ranks' logs "
             "first); then " +
             std::string(kCheckPortsFix);
    case 4:
    case 8:
    case 10:  // memory registration or access: GPUDirect RDMA setup (nccl#778)
      return "check GPUDirect RDMA on every node (gpuprep doctor: nvidia-peermem loaded, or DMA-BUF), the "
             "same on all of them; to confirm, rerun with NCCL_NET_GDR_LEVEL=LOC (no GPUDirect RDMA)";
    case 5:
      return "a flush follows an earlier error on the same connection: fix the first completion error";
    default:
      return kCheckPortsFix;
  }
}

std::string Cut(std::string_view s) {
  if (s.size() > kMaxQuoteBytes) s = s.substr(0, kMaxQuoteBytes);
  return TerminalSafe(ReplaceInvalidUtf8(s));
}

}  // namespace

const char* LevelName(Level l) {
  switch (l) {
    case Level::kOk:
      return "ok";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kFail:
      return "fail";
  }
  return "info";
}

std::string WcStatusName(int status) {
  if (status < 0 || status >= static_cast<int>(std::size(kWcStatus))) return "";
  return kWcStatus[status];
}

void Reader::Add(const std::string& code, Level level, std::string message, std::string fix) {
  const size_t line = s_.lines;
  for (Finding& f : s_.findings) {
    if (f.code == code && f.message == message) {
      f.last_line = line;
      ++f.count;
      return;
    }
  }
  Finding f;
  f.code = code;
  f.level = level;
  f.message = std::move(message);
  f.fix = std::move(fix);
  f.first_line = f.last_line = line;
  f.count = 1;
  f.quote = Cut(Trim(line_));
  s_.findings.push_back(std::move(f));
}

void Reader::Line(std::string_view line) {
  ++s_.lines;
  if (line.size() > kMaxLineBytes) {
    ++s_.long_lines;
    return;
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  line_.assign(line);
  // NCCL_DEBUG=VERSION's line has no prefix (src/debug.cc): "NCCL version 2.28.9+cuda13.0".
  if (auto v = line.find("NCCL version "); v != std::string_view::npos && s_.version.empty()) {
    std::string_view rest = line.substr(v + 13);
    auto end = rest.find_first_not_of("0123456789.");
    s_.version = std::string(rest.substr(0, end == std::string_view::npos ? rest.size() : end).substr(0, 32));
  }
  // PyTorch's NCCL watchdog (ProcessGroupNCCL): "Watchdog caught collective operation timeout: WorkNCCL(...,
  // Timeout(ms)=600000) ran for 600023 milliseconds before timing out." (pytorch/pytorch#118369).
  if (line.find("Watchdog caught collective operation timeout") != std::string_view::npos) {
    Add("nccl-log.watchdog-timeout", Level::kFail,
        "PyTorch's NCCL watchdog timed out a collective: some rank stopped taking part (a hang, a crash, or "
        "a "
        "network that stopped delivering)",
        "read every rank's log for the first NCCL WARN or error before the timeout; for a live hang, NCCL "
        "2.24 "
        "and later can be asked for each rank's state (ncclras); do not only raise the timeout");
    return;
  }
  auto info = line.find("NCCL INFO ");
  auto warn = line.find("NCCL WARN ");
  if (info == std::string_view::npos && warn == std::string_view::npos) return;
  ++s_.nccl_lines;
  const bool is_warn = warn != std::string_view::npos && (info == std::string_view::npos || warn < info);
  Classify(Trim(line.substr((is_warn ? warn : info) + 10)), is_warn);
}

// The bootstrap interface rules; true on a match.
bool Reader::ClassifyBootstrap(std::string_view b) {
  std::string_view rest;
  // src/bootstrap.cc: INFO "Bootstrap : Using eth0:10.0.0.1<0>" (2.23 and before, INIT),
  // "Bootstrap: Using eth0:10.0.0.1<0>" (2.26 on, BOOTSTRAP).
  if (After(b, "Bootstrap", "Using", rest)) {
    const std::string i = InterfaceOf(rest);
    if (s_.bootstrap.empty()) s_.bootstrap = Cut(i);
    if (IsLoopback(i) || IsBridge(i))
      Add("nccl-log.bootstrap-interface", Level::kWarn,
          "NCCL's bootstrap uses " + Cut(i) +
              ", which other nodes cannot reach: a job on two or more nodes hangs at its start",
          "set NCCL_SOCKET_IFNAME to the interface whose subnet holds the other nodes' addresses (for "
          "example "
          "NCCL_SOCKET_IFNAME=eth0; =NAME matches exactly, ^NAME excludes)");
    return true;
  }
  // src/bootstrap.cc: WARN "Bootstrap : no socket interface found" (NCCL_SOCKET_IFNAME matches nothing, or
  // no interface is up; captured from NCCL 2.28.9) and "NET/Socket : No usable listening interface found".
  if (After(b, "Bootstrap", "no socket interface found", rest) ||
      After(b, "NET/Socket", "No usable listening interface found", rest)) {
    Add("nccl-log.bootstrap-no-interface", Level::kFail,
        ifname_.empty() ? "NCCL found no network interface to bootstrap over"
                        : "NCCL_SOCKET_IFNAME=" + ifname_ + " matches no interface of this host",
        "set NCCL_SOCKET_IFNAME to an interface that is up on every node (ip -br addr), or unset it; a list "
        "is prefixes (eth matches eth0, eth1), =NAME matches one name exactly, ^ excludes");
    return true;
  }
  // src/misc/socket.cc: "NCCL_SOCKET_IFNAME set by environment to eth0".
  if (StartsWith(b, "NCCL_SOCKET_IFNAME set by environment to ")) {
    ifname_ = Cut(Trim(b.substr(41)).substr(0, 64));
    return true;
  }
  return false;
}

// The InfiniBand device rules (the devices and OOB interface NCCL uses, or none); true on a match.
bool Reader::ClassifyIbDevices(std::string_view b) {
  std::string_view rest;
  // src/transport/net_ib/init.cc: "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:..."
  if (After(b, "NET/IB", "Using", rest)) {
    auto oob = rest.find("OOB ");
    std::string_view devs = rest.substr(0, oob);
    for (const auto& w : SplitWords(devs)) {
      // "[0]mlx5_0:1/IB"; "[RO]" (relaxed ordering) and the ";" before OOB are no devices.
      if (w.size() < 4 || w[0] != '[' || w[1] < '0' || w[1] > '9' || s_.ib_devices.size() >= 64) continue;
      auto close = w.find(']');
      if (close != std::string::npos && close + 1 < w.size())
        s_.ib_devices.push_back(Cut(w.substr(close + 1)));
    }
    if (oob != std::string_view::npos) {
      const std::string i = InterfaceOf(rest.substr(oob + 4));
      if (IsLoopback(i) || IsBridge(i))
        Add("nccl-log.oob-interface", Level::kWarn,
            "NCCL's IB connections are set up over " + Cut(i) + ", which other nodes cannot reach",
            "set NCCL_SOCKET_IFNAME to the interface whose subnet holds the other nodes' addresses");
    }
    return true;
  }
  if (After(b, "NET/IB", "No device found", rest)) {
    ib_unavailable_ = true;
    return true;
  }
  return false;
}

// The network and channel rules (which network, GPUDirect RDMA per channel or HCA); true on a match.
bool Reader::ClassifyNetwork(std::string_view b) {
  // src/init.cc: INFO "Using network IB" / "Using network Socket" / a plugin's name.
  if (StartsWith(b, "Using network ")) {
    s_.network = Cut(Trim(b.substr(14)));
    return true;
  }
  // src/transport/net.cc: "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA".
  if (StartsWith(b, "Channel ")) {
    auto via = b.find(" via NET/");
    if (via == std::string_view::npos) return true;
    ++s_.net_channels;
    if (b.find("/GDRDMA", via) != std::string_view::npos) ++s_.gdr_channels;
    return true;
  }
  // src/graph/topo.cc (up to 2.28): "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" (nccl#1537).
  if (auto p = b.find("GPU Direct RDMA Disabled for HCA"); p != std::string_view::npos) {
    Add("nccl-log.gdr-disabled", Level::kWarn,
        "NCCL reports GPUDirect RDMA disabled " + Cut(Trim(b.substr(p + 25))) +
            ": traffic to that NIC is copied through host memory",
        "load the peer-memory module on every node (sudo modprobe nvidia-peermem) or use DMA-BUF (the open "
        "kernel modules); gpuprep doctor's network layer shows which the host has");
    return true;
  }
  return false;
}

// The network plugin rules (a plugin that failed to load or to initialise); true on a match.
bool Reader::ClassifyPlugin(std::string_view b, bool warn) {
  // src/plugin/plugin_open.cc (2.24 on): "NET/Plugin: Could not find: libnccl-net.so." means no plugin is
  // installed (normal); "NET/Plugin: LIB: ERROR" is a plugin that exists and failed to load. Up to 2.23
  // (src/net.cc): "NET/Plugin : Plugin load (LIB) returned N : ERROR", then "No plugin found, using internal
  // implementation"; N 2 with LIB itself missing is again no plugin.
  if (StartsWith(b, "NET/Plugin")) {
    std::string_view r = b.substr(10);
    r = Trim(r);
    if (StartsWith(r, ":")) r = Trim(r.substr(1));
    if (StartsWith(r, "Could not find") || StartsWith(r, "No plugin found") || StartsWith(r, "Loaded") ||
        StartsWith(r, "Using internal") || StartsWith(r, "Plugin name set"))
      return true;
    std::string lib, error;
    if (StartsWith(r, "Plugin load")) {
      auto open = r.find('('), close = r.find(')');
      if (open == std::string_view::npos || close == std::string_view::npos || close < open) return true;
      lib = std::string(r.substr(open + 1, close - open - 1));
      auto colon = r.find(" : ", close);
      error = colon == std::string_view::npos ? "" : std::string(r.substr(colon + 3));
      if (StartsWith(error, lib + ": cannot open shared object file")) return true;  // not installed
    } else {
      auto colon = r.find(": ");
      if (colon == std::string_view::npos) return true;
      lib = std::string(r.substr(0, colon));
      error = std::string(r.substr(colon + 2));
    }
    plugin_failed_ = true;
    Add("nccl-log.plugin-load-failed", Level::kFail,
        "NCCL's network plugin " + Cut(lib) + " failed to load (" + Cut(error) +
            "): NCCL falls back to its own transports, plain sockets where it has no InfiniBand",
        "install the plugin's dependencies in the image (ldd on the plugin library names what is missing), "
        "and pin NCCL_NET to the plugin's network so a fallback fails loudly");
    return true;
  }
  // src/plugin/net.cc: "Failed to initialize NET plugin X" (INFO), "Failed to initialize any NET plugin".
  if (StartsWith(b, "Failed to initialize") && b.find("NET plugin") != std::string_view::npos) {
    plugin_failed_ = true;
    Add("nccl-log.plugin-init-failed", warn ? Level::kFail : Level::kWarn,
        "NCCL could not initialise a network plugin (" + Cut(b) + ")",
        "check the plugin's devices on the node (gpuprep doctor's network layer) and that the container sees "
        "them (--device /dev/infiniband, --ulimit memlock=-1, --cap-add IPC_LOCK)");
    return true;
  }
  return false;
}

// The IB connection and transfer error rules (queue pair setup, completion errors); true on a match.
bool Reader::ClassifyIbErrors(std::string_view b) {
  // src/misc/ibvwrap.cc: WARN "Call to ibv_modify_qp failed with 110 Connection timed out, ..."; INFO
  // "..., retrying 1/3 after ..."; older: "NET/IB : ibv_modify_qp failed with error Network is unreachable"
  // (nccl-tests#185).
  if (auto p = b.find("ibv_modify_qp failed"); p != std::string_view::npos) {
    const bool retry = b.find("retrying") != std::string_view::npos;
    std::string why = Cut(Trim(b.substr(p + 20)));
    if (StartsWith(why, "with ")) why = why.substr(5);
    auto comma = why.find(',');
    if (comma != std::string::npos) why = why.substr(0, comma);
    Add(retry ? "nccl-log.modify-qp-retry" : "nccl-log.modify-qp-failed", retry ? Level::kWarn : Level::kFail,
        std::string(retry ? "NCCL had to retry bringing up" : "NCCL failed to bring up") +
            " an IB queue pair (ibv_modify_qp: " + why +
            "): the peer's address is not reachable over this port's GID",
        kCheckPortsFix);
    return true;
  }
  // src/transport/net_ib/p2p.cc and older net_ib.cc: "NET/IB : Got completion from peer 10.0.0.2<4000> with
  // error 12, ..." (nccl#426), "... with status=12 ..." and "status=IBV_WC_RETRY_EXC_ERR(12) ...".
  if (b.find("Got completion from peer") != std::string_view::npos) {
    const int st = CompletionStatus(b);
    const std::string name = WcStatusName(st);
    Add("nccl-log.ib-completion-error", Level::kFail,
        "an RDMA transfer failed: completion status " +
            (st < 0 ? std::string("unknown") : std::to_string(st)) + (name.empty() ? "" : " (" + name + ")"),
        CompletionFix(st));
    return true;
  }
  return false;
}

void Reader::Classify(std::string_view b, bool warn) {
  if (ClassifyBootstrap(b) || ClassifyIbDevices(b) || ClassifyNetwork(b) || ClassifyPlugin(b, warn) ||
      ClassifyIbErrors(b))
    return;
  if (StartsWith(b, "comm ") || StartsWith(b, "ncclCommInit")) {
    if (auto p = b.find(" nNodes "); p != std::string_view::npos) {
      const int n = LeadingInt(b.substr(p + 8));
      if (n > nodes_) nodes_ = n;
    }
    return;
  }
  if (!warn) return;
  if (b.find("timed out") != std::string_view::npos || b.find("timeout") != std::string_view::npos ||
      b.find("Timeout") != std::string_view::npos) {
    Add("nccl-log.timeout", Level::kFail, "NCCL gave up waiting: " + Cut(b),
        "check that every node reaches the others on NCCL_SOCKET_IFNAME's interface (firewalls, security "
        "groups) and that no rank stopped earlier: read every rank's log");
    return;
  }
  ++other_warns_;
}

Summary Reader::Finish() {
  const bool single = nodes_ == 1;
  // One node: the bootstrap and the network never leave the host, so what they use does not matter.
  if (single)
    for (Finding& f : s_.findings)
      if (f.code == "nccl-log.bootstrap-interface" || f.code == "nccl-log.oob-interface")
        f.level = Level::kInfo;
  const size_t line = s_.lines;
  auto add_end = [&](const std::string& code, Level level, std::string message, std::string fix) {
    line_.clear();
    Add(code, level, std::move(message), std::move(fix));
    s_.findings.back().first_line = s_.findings.back().last_line = line;
  };
  if (s_.network == "Socket") {
    if (single) {
      add_end("nccl-log.network", Level::kInfo,
              "NCCL uses its Socket transport (one node: no traffic leaves it)", "");
    } else if (plugin_failed_) {
      add_end("nccl-log.socket-fallback", Level::kFail,
              "NCCL fell back to plain sockets after its network plugin failed: inter-node traffic goes over "
              "TCP, many times slower than RDMA",
              "fix the plugin failure above, then pin NCCL_NET to the plugin's network so a fallback fails "
              "loudly");
    } else {
      add_end("nccl-log.socket", Level::kWarn,
              std::string("NCCL uses plain sockets between nodes") +
                  (ib_unavailable_ ? " (it found no usable InfiniBand or RoCE device)" : "") +
                  ": inter-node traffic goes over TCP at the NIC's speed",
              "if the nodes have RDMA devices (gpuprep doctor's network layer), pass them to the container "
              "(--device /dev/infiniband, --ulimit memlock=-1, --cap-add IPC_LOCK) and set NCCL_NET=IB so a "
              "fallback fails loudly; with none, this is the expected transport");
    }
  } else if (!s_.network.empty()) {
    add_end("nccl-log.network", Level::kOk, "NCCL uses network " + s_.network, "");
  }
  if (s_.net_channels > 0 && s_.network != "Socket") {
    const std::string counts =
        std::to_string(s_.gdr_channels) + " of " + std::to_string(s_.net_channels) + " network channels";
    if (s_.gdr_channels == s_.net_channels)
      add_end("nccl-log.gdr", Level::kOk, "GPUDirect RDMA in use on " + counts, "");
    else
      add_end("nccl-log.gdr-off", Level::kWarn,
              (s_.gdr_channels == 0 ? "GPUDirect RDMA in use on none of " + std::to_string(s_.net_channels) +
                                          " network channels: all copy through host memory (no peer-memory "
                                          "module or DMA-BUF)"
                                    : "GPUDirect RDMA in use on " + counts +
                                          ": the others copy through host memory (different setups across "
                                          "nodes, or no peer-memory module)"),
              "make every node the same: load nvidia-peermem (sudo modprobe nvidia-peermem) or use DMA-BUF "
              "(the open kernel modules); gpuprep doctor's network layer shows which each host has");
  }
  if (other_warns_ > 0)
    add_end("nccl-log.other-warn", Level::kInfo,
            std::to_string(other_warns_) + " other NCCL WARN line(s) that gpuprep does not classify", "");
  return s_;
}

Summary ReadText(std::string_view text) {
  Reader r;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    r.Line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return r.Finish();
}

}  // namespace gp::nccllog
