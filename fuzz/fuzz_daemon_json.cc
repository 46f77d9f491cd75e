// /etc/docker/daemon.json, any bytes (the first byte picks what the stack asks: default runtime, CDI on/off):
//  - EditDaemonJson gives an edit or a gp::FileError (exit 2, PATH:LINE:COL); never a crash, a hang, a
//    stack overflow or another exception. Over 1 MiB or deeper than 32 levels it always refuses.
//  - the tree reads what nlohmann::ordered_json::parse reads (value and order, duplicates included) and
//  writes
//    exactly its dump(4);
//  - an edit is lossless and stable: the new text parses, says what was asked, and holds every other key of
//    the old one with its value and place; editing it again changes nothing;
//  - its diff holds every line of the old text and of the new one, in order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "docker/daemon_json.h"
#include "docker/json_tree.h"
#include "util/error.h"
#include "util/json_locator.h"
#include "util/strings.h"

namespace {

using nlohmann::ordered_json;

// The old and new sides of a LineDiff, rebuilt from its marked lines.
void Sides(const std::string& diff, std::string& before, std::string& after) {
  for (size_t at = 0; at < diff.size();) {
    const size_t nl = diff.find('\n', at);
    if (nl == std::string::npos || nl < at + 2) std::abort();
    const std::string line = diff.substr(at + 2, nl - at - 2) + "\n";
    if (diff[at] != '+') before += line;
    if (diff[at] != '-') after += line;
    at = nl + 1;
  }
}

// `text` as lines, each ending with '\n' (what LineDiff keeps of it).
std::string Lined(const std::string& text) {
  if (text.empty() || text.back() == '\n') return text;
  return text + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  gp::docker::DaemonJsonWant want;
  want.default_runtime = (data[0] & 1) != 0;
  if (data[0] & 2) want.cdi = (data[0] & 4) != 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const bool too_big = text.size() > gp::docker::kMaxDaemonJsonBytes;
  const bool too_deep = gp::JsonTooDeepAt(text, gp::docker::kMaxDaemonJsonDepth).has_value();
  gp::docker::DaemonJsonEdit edit;
  try {
    edit = gp::docker::EditDaemonJson(text, want, "daemon.json");
  } catch (const gp::FileError& e) {
    if (std::string(e.what()).rfind("daemon.json:", 0) != 0 || e.code() != gp::kExitUsage) std::abort();
    return 0;
  }
  if (too_big || too_deep) std::abort();  // edited what the limits refuse

  // The tree against nlohmann's own parse and dump (the text is valid: the edit read it).
  const bool blank = gp::Trim(text).empty();  // counts as {} (daemon_json.h)
  if (!blank) {
    const ordered_json ref = ordered_json::parse(text);
    const ordered_json mine = gp::docker::ReadJsonTree(text, "daemon.json");
    if (!(mine == ref) || mine.dump() != ref.dump()) std::abort();
    if (gp::docker::WriteJsonTree(mine) != ref.dump(4)) std::abort();
  }
  if (!edit.changed) return 0;

  // Lossless: every key the edit did not mean to change is there, with its value, in its place.
  ordered_json before = blank ? ordered_json::object() : ordered_json::parse(text);
  ordered_json after = ordered_json::parse(edit.text);
  const auto& rt = after.at("runtimes").at(want.runtime);
  if (!rt.is_object() || !rt.contains("path")) std::abort();
  if (want.default_runtime && after.at("default-runtime") != want.runtime) std::abort();
  if (want.cdi && after.at("features").at("cdi") != *want.cdi) std::abort();
  // Do to the old tree what the edit says it does, in its order; then the two must be equal, order included.
  auto& brt = before["runtimes"];  // added at the end when absent; null becomes {} in place
  if (brt.is_null()) brt = ordered_json::object();
  if (!brt.contains(want.runtime) || brt[want.runtime].is_null()) brt[want.runtime] = rt;
  brt[want.runtime]["path"] = rt["path"];
  if (want.default_runtime) before["default-runtime"] = want.runtime;
  if (want.cdi) {
    auto& features = before["features"];
    if (features.is_null()) features = ordered_json::object();
    features["cdi"] = *want.cdi;
  }
  if (before.dump() != after.dump()) std::abort();

  // Stable: the new text already says all of it.
  if (gp::docker::EditDaemonJson(edit.text, want, "daemon.json").changed) std::abort();

  // The diff has both texts, every line once, in order.
  std::string old_side, new_side;
  Sides(edit.diff, old_side, new_side);
  if (old_side != Lined(text) || new_side != edit.text) std::abort();
  return 0;
}
