#include "accept/run_container.h"

#include <cstdlib>

namespace gp::accept {

std::string RunLabel(long pid, long long started_unix) {
  return std::to_string(pid) + "-" + std::to_string(started_unix);
}

long LabelPid(const std::string& label) {
  const size_t dash = label.find('-');
  const std::string digits = label.substr(0, dash);
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::strtol(digits.c_str(), nullptr, 10);
}

Reaped ReapStale(docker::Engine& engine, const std::function<bool(long pid)>& alive) {
  Reaped out;
  docker::EngineError err;
  const auto found = engine.ContainersLabelled(kAcceptLabel, &err);
  if (!found) {
    out.error = "listing gpuprep's measurement containers: " + err.message;
    return out;
  }
  for (const auto& [id, label] : *found) {
    const long pid = LabelPid(label);
    if (pid > 0 && alive(pid)) {
      out.busy = "another gpuprep accept (pid " + std::to_string(pid) + ") is measuring in container " +
                 id.substr(0, 12);
      continue;
    }
    if (!engine.RemoveContainer(id, &err)) {
      out.error = "removing container " + id.substr(0, 12) + " a stopped gpuprep accept left: " + err.message;
      continue;
    }
    out.removed.push_back(id);
  }
  return out;
}

ProgramEnd RunInContainer(docker::Engine& engine, docker::ContainerRun run, const std::string& label,
                          ProgramStream& stream, std::chrono::seconds limit,
                          const std::function<bool()>& interrupted) {
  run.labels = {{kAcceptLabel, label}};
  run.auto_remove = true;
  run.timeout = limit;
  docker::StreamedRun s;
  s.on_output = FeedSink(stream);
  s.keep_running = KeepRunning(stream, stream.now() + limit, interrupted);
  s.silence = limit;
  const docker::StreamedResult r = engine.RunStreamed(run, s);
  ProgramEnd end;
  if (!r.removed && !r.id.empty()) end.left = r.id;
  if (!r.started) {
    end.error = "the container " + (r.stage.empty() ? std::string("did not start") : "failed at " + r.stage) +
                ": " + r.error.message;
    return end;
  }
  end.started = true;
  end.stopped = r.stopped;
  end.interrupted = interrupted && interrupted();
  end.exit_code = r.stopped ? -1 : r.exit_code;
  stream.Finish(end.exit_code);
  return end;
}

}  // namespace gp::accept
