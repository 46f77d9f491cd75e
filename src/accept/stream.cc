#include "accept/stream.h"

#include <nlohmann/json.hpp>

namespace gp::accept {
namespace {

using Json = nlohmann::json;
using std::chrono::seconds;

struct Budget {
  const char* phase;
  int fast_s, default_s;
};
// The program measures each phase for ProgramSeconds (3 s fast, 10 s default) on every GPU at once; the
// rest of each allowance is setup: allocating and filling the buffers, pinning host memory, a CUDA
// context per peer (p2p), the collective's warm-up (all_reduce), and the barrier every worker meets at
// the phase's end.
constexpr Budget kBudgets[] = {
    {"matmul_bf16", 45, 60}, {"hbm_copy", 20, 40}, {"h2d", 20, 40},
    {"d2h", 20, 40},         {"p2p", 40, 90},      {"all_reduce", 60, 120},
};

// The all-reduce across nodes: NCCL connects the nodes (30 s) before the same allowance as one server's.
constexpr Budget kNodesBudget{"all_reduce_nodes", 90, 150};

bool KnownPhase(const std::string& p) {
  if (p == "burn" || p == kNodesBudget.phase) return true;
  for (const auto& b : kBudgets)
    if (p == b.phase) return true;
  return false;
}

std::string Seconds(seconds s) { return std::to_string(s.count()) + " s"; }

}  // namespace

double ProgramSeconds(bool fast) { return fast ? 3.0 : 10.0; }

seconds PhaseBudget(const std::string& phase, bool fast, seconds burn) {
  if (phase == "burn") return burn.count() > 0 ? burn + kBurnSetup : seconds(0);
  if (phase == kNodesBudget.phase)
    return kRendezvous + seconds(fast ? kNodesBudget.fast_s : kNodesBudget.default_s);
  for (const auto& b : kBudgets)
    if (phase == b.phase) return seconds(fast ? b.fast_s : b.default_s);
  return seconds(0);
}

seconds RunBudget(bool fast, seconds burn) {
  seconds total = kStartAllowance;
  if (burn.count() > 0) total += PhaseBudget("burn", fast, burn) + kBetweenPhases;
  for (const auto& b : kBudgets) total += seconds(fast ? b.fast_s : b.default_s) + kBetweenPhases;
  return total;
}

seconds NodesRunBudget(bool fast) {
  return kStartAllowance + PhaseBudget(kNodesBudget.phase, fast) + kBetweenPhases;
}

ProgramStream::ProgramStream(int gpus, bool fast, Now now)
    : gpus_(gpus), fast_(fast), now_(std::move(now)), deadline_(now_() + kStartAllowance) {}

void ProgramStream::LongLine() {
  Add(phase_, std::nullopt,
      "the measurement program wrote a line longer than " + std::to_string(kProgramLineMax >> 10) +
          " KiB: it was stopped");
}

void ProgramStream::Add(std::string phase, std::optional<int> gpu, std::string what) {
  findings_.push_back({std::move(phase), gpu, std::move(what)});
}

bool ProgramStream::on_stdout(std::string_view chunk) {
  if (stopped_) return false;
  total_ += chunk.size();
  if (total_ > kProgramOutputMax) {
    Add(phase_, std::nullopt,
        "the measurement program wrote more than " + std::to_string(kProgramOutputMax >> 20) +
            " MiB: it was stopped");
    stopped_ = true;
    return false;
  }
  partial_.append(chunk.data(), chunk.size());
  size_t start = 0, nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    if (!Line(std::string_view(partial_).substr(start, nl - start))) {
      stopped_ = true;
      return false;
    }
    start = nl + 1;
  }
  partial_.erase(0, start);
  if (partial_.size() > kProgramLineMax) {
    LongLine();
    stopped_ = true;
    return false;
  }
  return true;
}

void ProgramStream::on_stderr(std::string_view chunk) {
  if (!keep_nccl_) {
    stderr_.append(chunk.data(), chunk.size());
    if (stderr_.size() > kProgramStderrMax) stderr_.erase(0, stderr_.size() - kProgramStderrMax);
    return;
  }
  stderr_partial_.append(chunk.data(), chunk.size());
  size_t start = 0, nl;
  while ((nl = stderr_partial_.find('\n', start)) != std::string::npos) {
    StderrLine(std::string_view(stderr_partial_).substr(start, nl - start));
    start = nl + 1;
  }
  stderr_partial_.erase(0, start);
  if (stderr_partial_.size() > kProgramLineMax) {  // no NCCL line is this long (its buffer is 1 KiB)
    StderrLine(stderr_partial_);
    stderr_partial_.clear();
  }
}

void ProgramStream::StderrLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const bool nccl =
      line.find("NCCL INFO") != std::string_view::npos || line.find("NCCL WARN") != std::string_view::npos;
  if (!nccl) {
    stderr_.append(line.data(), line.size()).push_back('\n');
    if (stderr_.size() > kProgramStderrMax) stderr_.erase(0, stderr_.size() - kProgramStderrMax);
    return;
  }
  if (nccl_lines_.size() >= kMaxNcclLines) {
    ++nccl_dropped_;
    return;
  }
  std::string kept(line.substr(0, kMaxNcclLineBytes));
  for (char& ch : kept)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  nccl_lines_.push_back(std::move(kept));
}

std::optional<SteadyClock::time_point> ProgramStream::deadline() const {
  if (stopped_ || done_) return std::nullopt;
  return deadline_;
}

bool ProgramStream::Line(std::string_view line) {
  if (line.size() > kProgramLineMax) {
    LongLine();
    return false;
  }
  if (line.empty()) return true;
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("record") || !j["record"].is_string()) {
    if (unreadable_++ == 0)
      Add(phase_, std::nullopt, "the measurement program wrote a line that is not a record");
    return true;
  }
  const std::string kind = j["record"].get<std::string>();
  const std::string phase =
      j.contains("phase") && j["phase"].is_string() ? j["phase"].get<std::string>() : "";
  std::optional<int> gpu;
  if (j.contains("gpu") && j["gpu"].is_number_integer()) gpu = j["gpu"].get<int>();
  if (kind == "progress") {
    const std::string state =
        j.contains("state") && j["state"].is_string() ? j["state"].get<std::string>() : "";
    if (!KnownPhase(phase) || (state != "start" && state != "done")) {
      Add(phase, std::nullopt, "the measurement program reported progress gpuprep does not know");
      return true;
    }
    if (state == "start") {
      started_ = true;
      phase_ = phase;
      reported_.clear();
      deadline_ = now_() + PhaseBudget(phase, fast_, burn_);
      if (on_phase) on_phase(phase, PhaseBudget(phase, fast_, burn_));
    } else {
      phase_.clear();
      deadline_ = now_() + kBetweenPhases;
    }
  } else if (kind == "phase") {
    if (gpu) reported_.insert(*gpu);
    if (j.contains("gpus")) reported_.insert(-1);  // all_reduce: one record for all GPUs
    phase_lines_.emplace_back(line);
  } else if (kind == "error") {
    if (gpu) reported_.insert(*gpu);
    const std::string msg =
        j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>() : "no message";
    Add(phase, gpu, "the measurement program failed: " + msg.substr(0, 500));
  } else if (kind == "done") {
    done_ = true;
    phase_.clear();
  } else {
    Add(phase_, std::nullopt, "the measurement program wrote an unknown record");
  }
  return true;
}

void ProgramStream::Finish(int exit_code) {
  if (!partial_.empty() && !stopped_) Line(partial_);
  partial_.clear();
  if (!stderr_partial_.empty()) StderrLine(stderr_partial_);
  stderr_partial_.clear();
  if (done_ && exit_code == 0) return;
  if (!done_ && deadline_ && now_() >= *deadline_ && !stopped_) {
    if (phase_.empty()) {
      Add("", std::nullopt,
          started_ ? "the measurement program did not start its next phase within " +
                         Seconds(kBetweenPhases) + ": it was stopped"
                   : "the measurement program did not start measuring within " + Seconds(kStartAllowance) +
                         ": it was stopped");
    } else {
      std::string missing;
      for (int g = 0; g < gpus_; ++g)
        if (!reported_.count(g) && !reported_.count(-1))
          missing += (missing.empty() ? "" : ", ") + std::to_string(g);
      Add(phase_, std::nullopt,
          "phase " + phase_ + " did not finish within its " + Seconds(PhaseBudget(phase_, fast_, burn_)) +
              (missing.empty() ? "" : " (no result from GPU " + missing + ")") + ": it was stopped");
    }
    return;
  }
  if (stopped_) return;
  if (!done_) {
    const std::string tail = StderrTail();
    Add(phase_, std::nullopt,
        "the measurement program ended before it finished" +
            (exit_code >= 0 ? " (exit status " + std::to_string(exit_code) + ")" : std::string()) +
            (tail.empty() ? "" : ": " + tail));
  } else if (exit_code != 0) {
    Add("", std::nullopt, "the measurement program exited with status " + std::to_string(exit_code));
  }
}

std::string ProgramStream::StderrTail(size_t lines) const {
  std::vector<std::string> all;
  size_t start = 0;
  while (start < stderr_.size()) {
    size_t nl = stderr_.find('\n', start);
    if (nl == std::string::npos) nl = stderr_.size();
    if (nl > start) all.emplace_back(stderr_.substr(start, nl - start));
    start = nl + 1;
  }
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += (out.empty() ? "" : " | ") + all[i].substr(0, 300);
  return out;
}

}  // namespace gp::accept
