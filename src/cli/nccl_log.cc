// `gpuprep nccl-log [FILE]`: a job's NCCL_DEBUG=INFO log (stdin without FILE) read into the known
// multi-node failures, each with its cause and fix (src/nccllog/, docs/nccl-log.md). Reads at most
// nccllog::kMaxBytes; exit 0 when nothing failed, 1 when a finding is a failure, 2 for a FILE that cannot be
// read.
#include <CLI/CLI.hpp>
#include <istream>
#include <ostream>

#include "cli/commands.h"
#include "cli/json_out.h"
#include "nccllog/reader.h"
#include "sys/host_info.h"
#include "sys/lines.h"
#include "util/error.h"
#include "util/input.h"

namespace gp::cli {
namespace {

// A line longer than this in a FILE is refused (the reader itself skips those over kMaxLineBytes).
constexpr size_t kMaxFileLine = size_t{1} << 20;

// Stdin in chunks: lines split here, one longer than kMaxLineBytes passed on cut (the reader skips it).
void ReadStream(std::istream& in, nccllog::Reader& r, bool& truncated) {
  std::string buf(size_t{64} << 10, '\0');
  std::string line;
  bool long_line = false;
  size_t total = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    size_t take = got;
    if (total + got > nccllog::kMaxBytes) {
      take = nccllog::kMaxBytes - total;
      truncated = true;
    }
    total += take;
    std::string_view chunk(buf.data(), take);
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      std::string_view part = chunk.substr(0, nl);
      if (!long_line) {
        line.append(
            part.substr(0, nccllog::kMaxLineBytes + 1 - std::min(line.size(), nccllog::kMaxLineBytes + 1)));
        if (line.size() > nccllog::kMaxLineBytes) long_line = true;
      }
      if (nl == std::string_view::npos) break;
      r.Line(line);
      line.clear();
      long_line = false;
      chunk.remove_prefix(nl + 1);
    }
    if (truncated) break;
  }
  if (!line.empty()) r.Line(line);
}

void PrintText(Context& ctx, const nccllog::Summary& s) {
  std::ostream& o = *ctx.out;
  o << "NCCL " << (s.version.empty() ? std::string("version not seen") : TerminalSafe(s.version))
    << "; bootstrap: " << (s.bootstrap.empty() ? std::string("not seen") : TerminalSafe(s.bootstrap))
    << "; network: " << (s.network.empty() ? std::string("not seen") : TerminalSafe(s.network));
  if (s.net_channels > 0 && s.network != "Socket")
    o << "; GPUDirect RDMA on " << s.gdr_channels << " of " << s.net_channels << " network channels";
  o << "\n";
  if (s.nccl_lines == 0)
    o << "no NCCL INFO or WARN line among " << s.lines << " lines (run the job with NCCL_DEBUG=INFO)\n";
  for (const auto& f : s.findings) {
    o << nccllog::LevelName(f.level) << "  " << f.message;
    if (f.count > 1)
      o << " (" << f.count << " lines, " << f.first_line << "-" << f.last_line << ")";
    else if (!f.quote.empty())
      o << " (line " << f.first_line << ")";
    o << "\n";
    if (!f.quote.empty()) o << "      " << f.quote << "\n";
    if (!f.fix.empty()) o << "  fix: " << f.fix << "\n";
  }
  if (s.long_lines > 0)
    o << s.long_lines << " line(s) longer than " << nccllog::kMaxLineBytes << " bytes skipped\n";
  if (s.truncated) o << "read the first " << (nccllog::kMaxBytes >> 20) << " MiB only\n";
}

void PrintJsonSummary(Context& ctx, const nccllog::Summary& s) {
  nlohmann::ordered_json doc;
  auto opt = [](const std::string& v) {
    return v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v);
  };
  doc["version"] = opt(s.version);
  doc["bootstrap"] = opt(s.bootstrap);
  doc["network"] = opt(s.network);
  doc["ib_devices"] = s.ib_devices;
  doc["net_channels"] = s.net_channels;
  doc["gdr_channels"] = s.gdr_channels;
  doc["lines"] = s.lines;
  doc["nccl_lines"] = s.nccl_lines;
  doc["long_lines"] = s.long_lines;
  doc["truncated"] = s.truncated;
  doc["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : s.findings) {
    nlohmann::ordered_json j;
    j["code"] = f.code;
    j["status"] = nccllog::LevelName(f.level);
    j["message"] = f.message;
    j["fix"] = opt(f.fix);
    j["count"] = f.count;
    j["first_line"] = f.first_line;
    j["last_line"] = f.last_line;
    j["line"] = opt(f.quote);
    doc["findings"].push_back(std::move(j));
  }
  PrintJson(ctx, std::move(doc));
}

int RunNcclLog(Context& ctx, const std::string& file) {
  nccllog::Reader r;
  bool truncated = false;
  if (file.empty() || file == "-") {
    if (!ctx.in) throw UsageError("nccl-log: no FILE and no standard input");
    ReadStream(*ctx.in, r, truncated);
  } else {
    size_t total = 0;
    std::string err =
        sys::ForEachLine(sys::AbsoluteFromCwd(file), kMaxFileLine, [&](std::string_view line, size_t) {
          total += line.size() + 1;
          if (total > nccllog::kMaxBytes) {
            truncated = true;
            return false;
          }
          r.Line(line);
          return true;
        });
    if (!err.empty()) throw UsageError(err);
  }
  nccllog::Summary s = r.Finish();
  s.truncated = truncated;
  if (ctx.opts.json)
    PrintJsonSummary(ctx, s);
  else
    PrintText(ctx, s);
  for (const auto& f : s.findings)
    if (f.level == nccllog::Level::kFail) return kExitFailed;
  return kExitOk;
}

}  // namespace

void RegisterNcclLog(CLI::App* sub, Context& ctx, int& exit_code) {
  auto file = std::make_shared<std::string>();
  sub->add_option("file", *file, "The log (standard input without it, or with -)");
  sub->callback([&ctx, &exit_code, file] { exit_code = RunNcclLog(ctx, *file); });
}

}  // namespace gp::cli
