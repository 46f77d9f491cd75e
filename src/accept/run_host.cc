#include "accept/run_host.h"

#include <algorithm>
#include <cstdio>

#include "util/embedded.h"
#include "util/error.h"

namespace gp::accept {

std::string_view MeasureProgram() {
  const EmbeddedFile* f = FindEmbedded("src/accept/program/measure.py");
  if (!f) throw Error(kExitFailed, "the measurement program is not embedded in this build");
  return std::string_view(f->data, f->size);
}

std::vector<uint64_t> AllReduceSizes(const Table& table, const std::string& device, int gpus,
                                     const std::string& topology) {
  std::vector<uint64_t> out;
  for (const char* level : {"typical", "floor"})
    if (const Value* v = table.Find(device, gpus, topology, "all_reduce", level))
      if (v->size > 0 && std::find(out.begin(), out.end(), v->size) == out.end()) out.push_back(v->size);
  if (out.empty()) out.push_back(uint64_t{1} << 30);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ProgramArgv(const std::string& python, int gpus, bool fast,
                                     const std::vector<uint64_t>& allreduce_bytes,
                                     std::chrono::seconds burn) {
  std::vector<std::string> argv{python, "-c",     std::string(MeasureProgram()), "--device",
                                "cuda", "--gpus", std::to_string(gpus)};
  if (fast) argv.push_back("--fast");
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", ProgramSeconds(fast));
  argv.insert(argv.end(), {"--seconds", seconds});
  for (uint64_t b : allreduce_bytes) argv.insert(argv.end(), {"--allreduce-bytes", std::to_string(b)});
  if (burn.count() > 0) argv.insert(argv.end(), {"--burn-seconds", std::to_string(burn.count())});
  return argv;
}

std::vector<std::string> NodesProgramArgv(const std::string& python, int gpus, bool fast,
                                          const NodesRun& nodes) {
  std::vector<std::string> argv = ProgramArgv(python, gpus, fast, {kNodesMessageBytes});
  argv.insert(argv.end(), {"--phases", "all_reduce_nodes", "--nnodes", std::to_string(nodes.nnodes),
                           "--node-rank", std::to_string(nodes.node_rank), "--master", nodes.master,
                           "--rendezvous-seconds", std::to_string(kRendezvous.count())});
  return argv;
}

std::map<std::string, std::string> ProgramEnv(bool burn) {
  std::map<std::string, std::string> env{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"PYTHONUNBUFFERED", "1"}};
  if (burn) env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8";
  return env;
}

std::function<bool(int fd, std::string_view chunk)> FeedSink(ProgramSink& sink) {
  return [&sink](int fd, std::string_view chunk) {
    if (fd == 1) return sink.on_stdout(chunk);
    sink.on_stderr(chunk);
    return true;
  };
}

std::function<bool()> KeepRunning(const ProgramSink& sink, SteadyClock::time_point until,
                                  const std::function<bool()>& interrupted) {
  return [&sink, until, interrupted] {
    if (interrupted && interrupted()) return false;
    const auto now = sink.now();
    const auto d = sink.deadline();
    return now < until && (!d || now < *d);
  };
}

ProgramEnd RunOnHost(sys::CommandRunner& runner, const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env, ProgramStream& stream,
                     std::chrono::seconds limit, const std::function<bool()>& interrupted) {
  sys::Command c;
  c.argv = argv;
  c.env = env;
  c.timeout = limit;
  c.on_output = FeedSink(stream);
  c.keep_running = KeepRunning(stream, SteadyClock::time_point::max(), interrupted);  // c.timeout bounds it
  const sys::CommandResult r = runner.Run(c);
  ProgramEnd end;
  if (r.not_found) {
    end.error = argv.empty() ? "no program" : argv[0] + " was not found";
    return end;
  }
  end.started = true;
  end.stopped = r.stopped || r.timed_out;
  end.interrupted = interrupted && interrupted();
  end.exit_code = end.stopped ? -1 : r.exit_code;
  stream.Finish(end.exit_code);
  return end;
}

}  // namespace gp::accept
