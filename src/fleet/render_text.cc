#include <algorithm>
#include <cctype>
#include <sstream>

#include "fleet/render.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::fleet {

namespace {

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size() + 1, ' ');
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string RenderText(const Report& r) {
  std::ostringstream o;
  o << "fleet: " << r.hosts.size() << " host" << (r.hosts.size() == 1 ? "" : "s") << ": " << r.failing
    << " failing, " << r.warning << " with warnings, " << r.ok << " ok\n\n";
  size_t w = 4;
  for (const auto& h : r.hosts) w = std::max(w, TerminalSafe(h.label).size());
  o << Pad("HOST", w);
  for (const auto& l : r.layers) o << Pad(l, std::max<size_t>(l.size(), 4));
  o << "\n";
  for (const auto& h : r.hosts) {
    o << Pad(TerminalSafe(h.label), w);
    for (const auto& l : r.layers) {
      auto it = h.layers.find(l);
      o << Pad(it == h.layers.end() ? "-" : it->second, std::max<size_t>(l.size(), 4));
    }
    o << "\n";
  }
  if (r.groups.empty()) {
    o << "\nno warnings or failures\n";
    return o.str();
  }
  o << "\nfindings by code:\n";
  for (const auto& g : r.groups) {
    o << "\n"
      << Upper(g.status) << " " << TerminalSafe(g.code) << " (" << g.hosts.size() << " host"
      << (g.hosts.size() == 1 ? "" : "s") << "): ";
    std::vector<std::string> hs;
    for (const auto& h : g.hosts) hs.push_back(TerminalSafe(h));
    o << Join(hs, ", ") << "\n";
    for (const auto& m : g.messages) o << "  " << TerminalSafe(m) << "\n";
    for (const auto& f : g.fixes) o << "  fix: " << TerminalSafe(f) << "\n";
  }
  return o.str();
}

}  // namespace gp::fleet
