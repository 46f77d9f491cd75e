#include "apt/index.h"

#include <algorithm>

#include "apt/sources.h"
#include "util/input.h"
#include "util/strings.h"
#include "util/version.h"

namespace gp::apt {

std::string Relation::str() const { return op.empty() ? name : name + " (" + op + " " + version + ")"; }

namespace {

std::optional<Relation> ParseRelation(std::string_view text) {
  text = Trim(text);
  Relation r;
  size_t paren = text.find('(');
  std::string_view name = Trim(paren == std::string_view::npos ? text : text.substr(0, paren));
  // Architecture restrictions "[amd64]" and build profiles "<!nocheck>" only occur in source stanzas.
  if (size_t colon = name.find(':'); colon != std::string_view::npos) name = name.substr(0, colon);
  // A repository is outside input: a name or version that is not Debian's (Policy 5.6.1, 5.6.12), such as
  // "--allow-unauthenticated", never reaches a command line.
  if (!ValidDebName(name)) return std::nullopt;
  r.name = std::string(name);
  if (paren == std::string_view::npos) return r;
  size_t close = text.find(')', paren);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = Trim(text.substr(paren + 1, close - paren - 1));
  size_t i = 0;
  while (i < inner.size() && (inner[i] == '<' || inner[i] == '>' || inner[i] == '=')) ++i;
  std::string op(inner.substr(0, i));
  if (op == "<") op = "<=";  // obsolete forms, as dpkg reads them
  if (op == ">") op = ">=";
  if (op != "=" && op != ">=" && op != "<=" && op != ">>" && op != "<<") return std::nullopt;
  std::string_view ver = Trim(inner.substr(i));
  if (!ValidDebVersion(ver)) return std::nullopt;
  r.op = op;
  r.version = std::string(ver);
  return r;
}

// Calls f(field, value) for each field of one stanza (continuation lines joined with a space).
template <typename F>
void ForEachField(std::string_view stanza, F&& f) {
  std::string_view key;
  std::string value;
  auto flush = [&] {
    if (!key.empty()) f(key, value);
    key = {};
    value.clear();
  };
  size_t pos = 0;
  while (pos < stanza.size()) {
    size_t nl = stanza.find('\n', pos);
    std::string_view line =
        stanza.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? stanza.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == ' ' || line[0] == '\t') {
      if (!key.empty()) value += " " + std::string(Trim(line));
      continue;
    }
    flush();
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    key = line.substr(0, colon);
    value = std::string(Trim(line.substr(colon + 1)));
  }
  flush();
}

}  // namespace

std::vector<Clause> ParseRelations(std::string_view field) {
  std::vector<Clause> out;
  for (const auto& part : Split(std::string(field), ',')) {
    if (Trim(part).empty()) continue;
    Clause clause;
    bool bad = false;
    for (const auto& alt : Split(part, '|')) {
      auto r = ParseRelation(alt);
      if (!r) {
        bad = true;
        break;
      }
      clause.push_back(std::move(*r));
    }
    if (!bad && !clause.empty()) out.push_back(std::move(clause));
  }
  return out;
}

bool Satisfies(const std::string& version, const Relation& r) {
  if (r.op.empty()) return true;
  const int c = CompareDebVersions(version, r.version);
  if (r.op == "=") return c == 0;
  if (r.op == ">=") return c >= 0;
  if (r.op == "<=") return c <= 0;
  if (r.op == ">>") return c > 0;
  if (r.op == "<<") return c < 0;
  return false;
}

void Index::Add(const std::string& name, Candidate c) {
  Versions& v = packages_[name];
  if (!v.ids.insert(c.version + '\n' + c.architecture).second) return;
  for (const auto& p : c.provides) {
    auto& names = providers_[p];
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (!v.list.empty() && CompareDebVersions(c.version, v.list.back().version) > 0) v.sorted = false;
  v.list.push_back(std::move(c));
}

// Highest first; equal versions (two architectures) in the order they were added.
const std::vector<Candidate>& Index::Sorted(Versions& v) const {
  if (!v.sorted) {
    std::stable_sort(v.list.begin(), v.list.end(), [](const Candidate& a, const Candidate& b) {
      return CompareDebVersions(a.version, b.version) > 0;
    });
    v.sorted = true;
  }
  return v.list;
}

const std::vector<Candidate>* Index::Find(const std::string& name) const {
  auto it = packages_.find(name);
  return it == packages_.end() ? nullptr : &Sorted(it->second);
}

const Candidate* Index::Find(const std::string& name, const std::string& version) const {
  if (const auto* list = Find(name))
    for (const auto& c : *list)
      if (c.version == version) return &c;
  return nullptr;
}

std::vector<std::string> Index::Providers(const std::string& name) const {
  auto it = providers_.find(name);
  return it == providers_.end() ? std::vector<std::string>{} : it->second;
}

std::vector<std::string> Index::Names() const {
  std::vector<std::string> out;
  out.reserve(packages_.size());
  for (const auto& [name, list] : packages_) out.push_back(name);
  return out;
}

void ParsePackages(std::string_view text, const std::string& arch, Index& index) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("\n\n", pos);
    std::string_view stanza =
        text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 2;
    std::string name, provides;
    Candidate c;
    ForEachField(stanza, [&](std::string_view key, const std::string& value) {
      if (key == "Package")
        name = value;
      else if (key == "Version")
        c.version = value;
      else if (key == "Architecture")
        c.architecture = value;
      else if (key == "Provides")
        provides = value;
      else if (key == "Depends" || key == "Pre-Depends") {
        auto rel = ParseRelations(value);
        c.depends.insert(c.depends.end(), rel.begin(), rel.end());
      }
    });
    if (!ValidDebName(name) || !ValidDebVersion(c.version)) continue;  // see ParseRelation
    if (!arch.empty() && c.architecture != arch && c.architecture != "all") continue;
    for (const auto& clause : ParseRelations(provides))
      for (const auto& r : clause) c.provides.push_back(r.name);
    index.Add(name, std::move(c));
  }
}

std::vector<std::string> PackagesFiles(const sys::Fs& fs, const manifest::AptRepository& repo,
                                       const std::string& lists_dir) {
  std::vector<std::string> out;
  const std::string prefix = ListsPrefix(repo);
  for (const auto& name : fs.List(lists_dir))
    if (StartsWith(name, prefix) && EndsWith(name, "Packages")) out.push_back(lists_dir + "/" + name);
  return out;
}

RepoIndex ReadRepoIndex(const sys::Fs& fs, const std::vector<const manifest::AptRepository*>& repos,
                        const std::string& arch, const std::string& lists_dir) {
  RepoIndex out;
  out.lists_dir = lists_dir;
  out.complete = !repos.empty();
  for (const auto* r : repos) {
    auto files = PackagesFiles(fs, *r, lists_dir);
    if (files.empty()) out.complete = false;
    for (const auto& f : files)
      if (auto text = fs.Read(f)) ParsePackages(*text, arch, out.index);
  }
  return out;
}

std::string DpkgArch(const std::string& machine) {
  if (machine == "x86_64" || machine == "amd64") return "amd64";
  if (machine == "aarch64" || machine == "arm64") return "arm64";
  if (machine == "ppc64le") return "ppc64el";
  return "";
}

}  // namespace gp::apt
