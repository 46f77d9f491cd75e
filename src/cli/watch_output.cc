// watch's outputs (watch_output.h).
#include "cli/watch_output.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>

#include "cli/json_out.h"
#include "sys/terminal.h"
#include "watch/jsonl.h"
#include "watch/table.h"
#include "watch/text.h"

namespace gp::cli {

WatchOutput::WatchOutput(Context& ctx, std::string prom_path, bool live)
    : ctx_(ctx),
      prom_path_(std::move(prom_path)),
      table_(live && ctx.out_is_tty && !ctx.opts.json && sys::TerminalColumns(STDOUT_FILENO)) {}

void WatchOutput::Redraw(const watch::Sample& s) {
  const int columns =
      sys::TerminalColumns(STDOUT_FILENO).value_or(100);  // asked each time: a resize shows next tick
  // Home, then the table, each line cleared to its end, then the rest of the screen cleared.
  const int rows = sys::TerminalRows(STDOUT_FILENO).value_or(0);
  std::string text = watch::RenderTable(s, current_, columns, rows, ctx_.use_color());
  std::string framed = "\x1b[H";
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    framed += text.substr(start, end - start) + "\x1b[K\n";
    start = end + 1;
  }
  *ctx_.out << framed << "\x1b[J";
  ctx_.out->flush();
}

void WatchOutput::WriteProm(bool up) {
  if (prom_path_.empty() || !ctx_.local_fs) return;
  // A FIFO nobody reads is skipped (a warning), never waited for: the run goes on sampling.
  const sys::WriteResult r =
      ctx_.local_fs->WriteOutput(prom_path_, prom_.Render(up), 0644, /*wait_for_reader=*/false);
  if (!r.ok) spdlog::warn("--prometheus: cannot write {}: {}", prom_path_, r.error);
}

void WatchOutput::OnSample(const watch::Sample& s) {
  if (!started_) {
    started_ = true;
    window_ms_ = s.window_ms;
    std::vector<std::pair<watch::GpuId, std::string>> gpus;
    gpus.reserve(s.gpus.size());
    for (const watch::GpuSample& g : s.gpus) gpus.emplace_back(g.id, g.name);
    prom_.SetGpus(gpus);
    WriteProm(true);
  }
  bool write_now = false;
  for (const watch::GpuSample& g : s.gpus) {
    if (g.state == watch::GpuState::kLost) write_now = prom_.MarkLost(g.id) || write_now;
    write_now = prom_.AddXids(g) || write_now;
  }
  if (write_now) WriteProm(true);  // at once: an alert on a lost GPU or an Xid need not wait for the window
  if (table_) Redraw(s);
  if (!ctx_.opts.json) return;
  PrintJson(ctx_, watch::SampleJson(s), -1);
  ctx_.out->flush();
}

void WatchOutput::OnVerdicts(const std::vector<watch::Verdict>& vs) {
  if (!vs.empty())
    current_ = {vs.end() - static_cast<std::ptrdiff_t>(std::count_if(
                               vs.begin(), vs.end(),
                               [&](const watch::Verdict& v) { return v.start_ms == vs.back().start_ms; })),
                vs.end()};
  for (const watch::Verdict& v : vs) {
    if (table_) break;  // the table shows them
    if (ctx_.opts.json)
      PrintJson(ctx_, watch::VerdictJson(v), -1);
    else
      *ctx_.out << watch::RenderVerdictText(v);
  }
  ctx_.out->flush();
  for (size_t i = 0; i < vs.size();) {  // one Add per window (a late sample can close several)
    size_t j = i;
    while (j < vs.size() && vs[j].start_ms == vs[i].start_ms) ++j;
    prom_.Add({vs.begin() + static_cast<std::ptrdiff_t>(i), vs.begin() + static_cast<std::ptrdiff_t>(j)},
              window_ms_);
    i = j;
  }
  WriteProm(true);
}

void WatchOutput::OnSummary(const watch::Summary& s) {
  summary_ = s;
  if (table_) *ctx_.out << "\r\x1b[K";  // below the table, over the terminal's echoed ^C
  if (ctx_.opts.json)
    PrintJson(ctx_, watch::SummaryJson(s), -1);
  else
    *ctx_.out << watch::RenderSummaryText(s);
  ctx_.out->flush();
  WriteProm(false);
}

}  // namespace gp::cli
