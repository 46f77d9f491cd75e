#include "apt/sources.h"

#include <cstdio>

#include "util/strings.h"

namespace gp::apt {

std::string ListLine(const manifest::AptRepository& repo) {
  std::string line = "deb [signed-by=" + repo.keyring_path + "] " + repo.url + " " + repo.suite;
  for (const auto& c : repo.components) line += " " + c;
  return line;
}

std::string ListFileContents(const manifest::AptRepository& repo, const std::string& stack) {
  return "# gpuprep: repository " + repo.name + " of stack " + stack +
         " (do not edit; gpuprep apply rewrites it)\n" + ListLine(repo) + "\n";
}

std::string NormalizeUrl(const std::string& url) {
  std::string u = url;
  while (u.size() > 1 && u.back() == '/') u.pop_back();
  return u;
}

namespace {

// One "deb [opts] URL ..." line: the URL and its signed-by ("" when none). False for other lines.
bool ParseDebLine(std::string_view raw, std::string& url, std::string& signed_by) {
  std::string line(Trim(raw));
  if (line.empty() || line[0] == '#') return false;
  auto words = SplitWords(line);
  if (words.empty() || (words[0] != "deb" && words[0] != "deb-src")) return false;
  size_t i = 1;
  signed_by.clear();
  if (i < words.size() && !words[i].empty() && words[i][0] == '[') {
    // options run until the word ending in ']'
    std::string opts;
    for (; i < words.size(); ++i) {
      opts += words[i] + " ";
      if (!words[i].empty() && words[i].back() == ']') {
        ++i;
        break;
      }
    }
    for (char& c : opts)
      if (c == '[' || c == ']') c = ' ';
    for (const auto& opt : SplitWords(opts))
      if (StartsWith(opt, "signed-by=")) signed_by = opt.substr(10);
  }
  if (i >= words.size()) return false;
  url = words[i];
  return true;
}

void ScanList(const std::string& path, const std::string& text, const manifest::AptRepository& repo,
              std::vector<Conflict>& out) {
  const std::string want = NormalizeUrl(repo.url);
  for (const auto& line : Split(text, '\n')) {
    std::string url, signed_by;
    if (!ParseDebLine(line, url, signed_by)) continue;
    if (NormalizeUrl(url) != want || signed_by == repo.keyring_path) continue;
    out.push_back({path, "names " + repo.url +
                             (signed_by.empty() ? " without signed-by" : " with signed-by=" + signed_by)});
    return;
  }
}

void ScanDeb822(const std::string& path, const std::string& text, const manifest::AptRepository& repo,
                std::vector<Conflict>& out) {
  const std::string want = NormalizeUrl(repo.url);
  // Stanzas separated by blank lines; fields "URIs:" and "Signed-By:" (an inline key counts as "other").
  bool names_url = false, inline_key = false;
  std::string signed_by;
  auto flush = [&] {
    if (names_url && (inline_key || signed_by != repo.keyring_path))
      out.push_back({path, "names " + repo.url +
                               (inline_key          ? " with an inline Signed-By key"
                                : signed_by.empty() ? " without Signed-By"
                                                    : " with Signed-By: " + signed_by)});
    names_url = inline_key = false;
    signed_by.clear();
  };
  std::string last_key;
  for (const auto& raw : Split(text, '\n')) {
    std::string_view line = raw;
    if (Trim(line).empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    if (line[0] == ' ' || line[0] == '\t') {
      if (last_key == "signed-by") inline_key = true;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    last_key = ToLower(Trim(line.substr(0, colon)));
    std::string value(Trim(line.substr(colon + 1)));
    if (last_key == "uris") {
      for (const auto& u : SplitWords(value))
        if (NormalizeUrl(u) == want) names_url = true;
    } else if (last_key == "signed-by") {
      signed_by = value;
    }
  }
  flush();
}

}  // namespace

std::vector<Conflict> FindConflicts(const sys::Fs& fs, const manifest::AptRepository& repo) {
  std::vector<Conflict> out;
  const std::string dir = "/etc/apt/sources.list.d";
  for (const auto& name : fs.List(dir)) {
    const std::string path = dir + "/" + name;
    if (path == repo.list_path) continue;
    const bool list = EndsWith(name, ".list"), sources = EndsWith(name, ".sources");
    if (!list && !sources) continue;
    auto text = fs.Read(path);
    if (!text) continue;
    if (list)
      ScanList(path, *text, repo, out);
    else
      ScanDeb822(path, *text, repo, out);
  }
  return out;
}

std::string ListsPrefix(const manifest::AptRepository& repo) {
  std::string u = repo.url;
  size_t scheme = u.find("://");
  if (scheme != std::string::npos) u = u.substr(scheme + 3);
  size_t at = u.find('@');  // apt drops user:password
  if (at != std::string::npos && at < u.find('/')) u = u.substr(at + 1);
  if (u.empty() || u.back() != '/') u += '/';
  std::string out;
  static const std::string kQuote = "\\|{}[]<>\"^~_=!@#$%^&*";
  for (unsigned char c : u) {
    if (c == '/') {
      out += '_';
    } else if (c <= 0x20 || c >= 0x7f || kQuote.find(static_cast<char>(c)) != std::string::npos) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace gp::apt
