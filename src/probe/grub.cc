// GRUB's menu and defaults as files say them: /etc/default/grub (+ grub.d/*.cfg), grubenv and grub.cfg. The
// menu keeps grub.cfg's order (GRUB counts entries as written; it never sorts by version).
#include <cctype>

#include "probe/boot.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::probe {
namespace {

constexpr size_t kGrubMaxDepth = 16;
constexpr size_t kGrubMaxEntries = 4096;

// A line split into words as GRUB's (and the shell's) quoting reads them: '...' literal, "..." with
// backslash escapes, a bare backslash escaping the next character. `ok` false on an unclosed quote.
std::vector<std::string> GrubWords(std::string_view line, bool* ok = nullptr) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  if (ok) *ok = true;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      in_word = true;
      size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) {
        if (ok) *ok = false;
        end = line.size();
      }
      cur.append(line.substr(i + 1, end - i - 1));
      i = end;
    } else if (c == '"') {
      in_word = true;
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) ++j;
        cur.push_back(line[j]);
      }
      if (j >= line.size() && ok) *ok = false;
      i = j;
    } else if (c == '\\' && i + 1 < line.size()) {
      in_word = true;
      cur.push_back(line[++i]);
    } else if (c == '#' && !in_word) {
      break;
    } else {
      in_word = true;
      cur.push_back(c);
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

bool GrubIndex(std::string_view s) {
  return !s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// The kernel a `linux` line boots: the basename of its first argument after "vmlinuz-".
std::string KernelOfLinuxLine(const std::vector<std::string>& w) {
  if (w.size() < 2) return {};
  std::string_view path = w[1];
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!StartsWith(base, "vmlinuz-")) return {};
  base.remove_prefix(8);
  return ValidKernelRelease(base) ? std::string(base) : std::string();
}

struct GrubFrame {
  std::vector<GrubEntry>* list = nullptr;  // a submenu's children (entries go there)
  GrubEntry* entry = nullptr;              // a menuentry (its linux line goes there)
};

GrubEntry EntryFromWords(const std::vector<std::string>& w) {
  GrubEntry e;
  e.submenu = w[0] == "submenu";
  if (w.size() > 1) e.title = w[1];
  for (size_t i = 2; i + 1 < w.size(); ++i)
    if (w[i] == "$menuentry_id_option" || w[i] == "--id") e.id = w[i + 1];
  for (const auto& word : w)
    if (StartsWith(word, "--id=")) e.id = word.substr(5);
  return e;
}

}  // namespace

bool ValidKernelRelease(std::string_view k) {
  if (k.empty() || k.size() > 64 || !std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '.' || c == '+' || c == '-'))
      return false;
  return true;
}

std::optional<std::string> ParseGrubDefaultVar(std::string_view text, bool* set) {
  std::optional<std::string> value = std::string();
  *set = false;
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (StartsWith(line, "export ")) line = Trim(line.substr(7));
    if (!StartsWith(line, "GRUB_DEFAULT=")) continue;
    std::string_view rhs = line.substr(13);
    bool ok = true;
    std::vector<std::string> w = GrubWords(rhs, &ok);
    *set = true;
    // The shell would expand these: the value is not in the file.
    const bool expanded = rhs.find('$') != std::string_view::npos || rhs.find('`') != std::string_view::npos;
    if (!ok || expanded || w.size() > 1)
      value.reset();
    else
      value = w.empty() ? std::string() : w[0];
  }
  return value;
}

std::string GrubEnvVar(std::string_view grubenv, std::string_view name) {
  std::string out;
  for (const auto& line : Split(grubenv, '\n')) {
    if (line.size() > name.size() && StartsWith(line, name) && line[name.size()] == '=')
      out = std::string(line.substr(name.size() + 1));
  }
  return out;
}

GrubMenu ParseGrubCfg(std::string_view text) {
  GrubMenu menu;
  std::vector<GrubFrame> stack;
  size_t count = 0;
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line == "}") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    std::vector<std::string> w = GrubWords(line);
    if (w.empty()) continue;
    const bool opens = w.back() == "{" || EndsWith(line, "{");
    if ((w[0] == "menuentry" || w[0] == "submenu") && opens && stack.size() < kGrubMaxDepth &&
        count < kGrubMaxEntries) {
      std::vector<GrubEntry>* list = &menu.entries;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it)
        if (it->list || it->entry) {
          list = it->list;
          break;
        }
      if (!list) {  // inside a menuentry: not a menu item
        stack.push_back({});
        continue;
      }
      list->push_back(EntryFromWords(w));
      ++count;
      GrubEntry& e = list->back();
      stack.push_back(e.submenu ? GrubFrame{&e.children, nullptr} : GrubFrame{nullptr, &e});
      continue;
    }
    if (opens) {
      stack.push_back({});
      continue;
    }
    if (!stack.empty() && stack.back().entry &&
        (w[0] == "linux" || w[0] == "linuxefi" || w[0] == "linux16")) {
      if (stack.back().entry->kernel.empty()) stack.back().entry->kernel = KernelOfLinuxLine(w);
      continue;
    }
    if (stack.empty() && w[0] == "set" && w.size() == 2 && StartsWith(w[1], "default=")) {
      std::string value = w[1].substr(8);
      if (value == "${next_entry}") continue;  // the one-shot branch, read from grubenv instead
      menu.default_value = value;
      menu.default_found = true;
    }
  }
  return menu;
}

const GrubEntry* ResolveGrubEntry(const GrubMenu& menu, std::string_view spec) {
  if (spec.empty()) spec = "0";
  const std::vector<GrubEntry>* level = &menu.entries;
  const GrubEntry* found = nullptr;
  for (const auto& part : Split(spec, '>')) {
    if (!level) return nullptr;
    found = nullptr;
    if (GrubIndex(part)) {
      size_t i = std::stoul(std::string(part));
      if (i < level->size()) found = &(*level)[i];
    } else {
      for (const auto& e : *level)
        if (e.title == part || (!e.id.empty() && e.id == part)) {
          found = &e;
          break;
        }
    }
    if (!found) return nullptr;
    level = found->submenu ? &found->children : nullptr;
  }
  return found && !found->submenu ? found : nullptr;
}

}  // namespace gp::probe
