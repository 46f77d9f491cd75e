#include "apply/journal.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace gp::apply {

void Journal::Touch(const std::vector<std::string>& layers) {
  for (const auto& l : layers)
    if (std::find(touched_layers.begin(), touched_layers.end(), l) == touched_layers.end())
      touched_layers.push_back(l);
}

std::string JournalToText(const Journal& j) {
  using nlohmann::json;
  json steps = json::array();
  for (const auto& s : j.steps)
    steps.push_back(
        {{"id", s.id}, {"layers", s.layers}, {"status", s.status}, {"at", s.at}, {"detail", s.detail}});
  json doc = {{"gpuprep", GPUPREP_VERSION},
              {"manifest", j.manifest},
              {"stack", j.stack},
              {"only", j.only},
              {"skip", j.skip},
              {"state", j.state},
              {"reboot_reason", j.reboot_reason},
              {"started", j.started},
              {"updated", j.updated},
              {"touched_layers", j.touched_layers},
              {"steps", steps}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Journal JournalFromText(const std::string& text) {
  using nlohmann::json;
  Journal j;
  try {
    json doc = json::parse(text);
    j.manifest = doc.value("manifest", "");
    j.stack = doc.value("stack", "");
    j.only = doc.value("only", std::vector<std::string>{});
    j.skip = doc.value("skip", std::vector<std::string>{});
    j.state = doc.value("state", "");
    j.reboot_reason = doc.value("reboot_reason", "");
    j.started = doc.value("started", "");
    j.updated = doc.value("updated", "");
    j.touched_layers = doc.value("touched_layers", std::vector<std::string>{});
    for (const auto& s : doc.value("steps", json::array()))
      j.steps.push_back({s.value("id", ""), s.value("layers", std::vector<std::string>{}),
                         s.value("status", ""), s.value("at", ""), s.value("detail", "")});
  } catch (const json::exception& e) {
    throw Error(kExitFailed, std::string(kJournalPath) + ": not a gpuprep journal (" + e.what() + ")");
  }
  return j;
}

std::optional<Journal> ReadJournal(const sys::Fs& fs) {
  auto text = fs.Read(kJournalPath);
  if (!text) return std::nullopt;
  return JournalFromText(*text);
}

sys::WriteResult WriteJournal(sys::Fs& fs, const Journal& j) {
  return fs.WriteAtomic(kJournalPath, JournalToText(j), 0644, /*keep_backup=*/false);
}

}  // namespace gp::apply
