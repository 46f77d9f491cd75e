#include "accept/offer.h"

#include "manifest/settings_doc.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::accept {
namespace {

// Where a value came from: the --expect flag (path empty), or a position in an Offer document.
struct At {
  std::string path;
  int line = 0, col = 0;
  std::string key;  // the document's key ("ram", "gpus.board")
};

// Refuses a part of the offer: `--expect: "PART": WHY`, or `PATH:LINE:COL: KEY: WHY`.
[[noreturn]] void Refuse(const At& at, const std::string& part, const std::string& why) {
  if (at.path.empty()) throw FlagError("--expect", QuoteToken(part) + ": " + why);
  throw FileError(at.path, at.line, at.col, at.key + ": " + why);
}

[[noreturn]] void Bad(const std::string& part, const std::string& why) { Refuse(At{}, part, why); }

// The spec's parts, split at commas outside double quotes.
std::vector<std::string> Parts(const std::string& spec) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : spec) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) Bad(spec, "a quote is not closed");
  return out;
}

// "8x3.84TB" / "8x\"H100 SXM5 80GB\"" -> the count and the rest.
std::pair<int, std::string> Count(const std::string& part, const std::string& what) {
  const size_t x = part.find('x');
  auto n = x == std::string::npos ? std::nullopt : ParseUnsigned(part.substr(0, x));
  if (!n || *n == 0 || *n > 1024) Bad(part, what + " is written COUNTx" + what + " (8x...)");
  return {static_cast<int>(*n), part.substr(x + 1)};
}

uint64_t Size(const std::string& part, const std::string& text, const At& at = {}) {
  uint64_t b = 0;
  if (!ParseSize(text, &b) || b == 0)
    Refuse(at, part, "not a size (2TB, 3.84TB, 1.5TiB)" + BareUnitHint(text));
  return b;
}

int64_t Cpus(const std::string& part, const std::string& text, const At& at = {}) {
  auto n = ParseUnsigned(text);
  if (!n || *n == 0 || *n > (1u << 20)) Refuse(at, part, "not a whole number of cores");
  return static_cast<int64_t>(*n);
}

// A count of GPUs or NVMe devices in a document: 1 to 1024.
int DocCount(const std::string& text, const At& at) {
  auto n = ParseUnsigned(text);
  if (!n || *n == 0 || *n > 1024) Refuse(at, text, "a whole number from 1 to 1024");
  return static_cast<int>(*n);
}

// `PATH:RATE` (`/data:2GB/s`): a directory and the throughput its storage must reach at least.
StorageFloor StorageFloorOf(const std::string& part, const std::string& text, const At& at = {}) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    Refuse(at, part, "storage is written PATH:RATE (/data:2GB/s)");
  StorageFloor f;
  f.path = text.substr(0, colon);
  f.text = text.substr(colon + 1);
  uint64_t b = 0;
  const std::string rate = EndsWith(f.text, "/s") ? f.text.substr(0, f.text.size() - 2) : "";
  if (rate.empty() || !ParseSize(rate, &b) || b == 0)
    Refuse(at, part, "not a rate (2GB/s, 500MB/s)" + BareUnitHint(rate));
  f.bytes_per_s = static_cast<double>(b);
  return f;
}

const KnownBoard* FindBoard(const std::string& name, const std::vector<KnownBoard>& boards) {
  const std::string want = ToLower(name);
  for (const auto& b : boards) {
    if (ToLower(b.name) == want) return &b;
    for (const auto& n : b.names)
      if (ToLower(n) == want) return &b;
    for (const auto& id : b.pci_ids)
      if (ToLower(id) == want) return &b;
  }
  return nullptr;
}

// The offer's GPUs: N boards the catalogue knows (by name, catalogue entry name or PCI id).
void SetGpus(Offer& o, int n, const std::string& board, const std::vector<KnownBoard>& boards,
             const std::string& part, const At& at) {
  const KnownBoard* b = FindBoard(board, boards);
  if (!b) {
    std::vector<std::string> names;
    names.reserve(boards.size());
    for (const auto& k : boards) names.push_back(k.name);
    auto near = DidYouMean(board, names);
    Refuse(at, part,
           "no board of the catalogue is called that (`gpuprep size` lists them)" +
               (near ? "; did you mean \"" + *near + "\"?" : std::string()));
  }
  o.gpus = n;
  o.board = board;
  o.pci_ids = b->pci_ids;
  o.board_mib = b->mib;
}

const manifest::DocSetting* Setting(const manifest::SettingsDoc& doc, const std::string& key) {
  for (const auto& s : doc.settings)
    if (s.key == key) return &s;
  return nullptr;
}

At AtOf(const std::string& path, const manifest::DocSetting& s) { return At{path, s.line, s.col, s.key}; }

// A pair of keys stated together (gpus.count and gpus.board, nvme.count and nvme.size): both or neither.
bool Pair(const manifest::SettingsDoc& doc, const std::string& path, const std::string& a,
          const std::string& b) {
  const manifest::DocSetting *x = Setting(doc, a), *y = Setting(doc, b);
  if (!x && !y) return false;
  if (!x) Refuse(AtOf(path, *y), y->value, "give " + a + " too");
  if (!y) Refuse(AtOf(path, *x), x->value, "give " + b + " too");
  return true;
}

}  // namespace

Offer ParseOfferDoc(const std::string& text, const std::string& path, const std::vector<KnownBoard>& boards) {
  const manifest::SettingsDoc doc = manifest::ParseSettingsDoc(
      text, path, "Offer", {"gpus.count", "gpus.board", "cpus", "ram", "nvme.count", "nvme.size", "storage"});
  Offer o;
  if (Pair(doc, path, "gpus.count", "gpus.board")) {
    const manifest::DocSetting& count = *Setting(doc, "gpus.count");
    const manifest::DocSetting& board = *Setting(doc, "gpus.board");
    SetGpus(o, DocCount(count.value, AtOf(path, count)), board.value, boards, board.value, AtOf(path, board));
  }
  if (const auto* s = Setting(doc, "cpus")) o.cpus = Cpus(s->value, s->value, AtOf(path, *s));
  if (const auto* s = Setting(doc, "ram")) o.ram_bytes = Size(s->value, s->value, AtOf(path, *s));
  if (Pair(doc, path, "nvme.count", "nvme.size")) {
    const manifest::DocSetting& count = *Setting(doc, "nvme.count");
    const manifest::DocSetting& size = *Setting(doc, "nvme.size");
    o.nvme_count = DocCount(count.value, AtOf(path, count));
    o.nvme_bytes = Size(size.value, size.value, AtOf(path, size));
  }
  if (const auto* s = Setting(doc, "storage"))
    o.storage.push_back(StorageFloorOf(s->value, s->value, AtOf(path, *s)));
  if (doc.settings.empty())
    throw FileError(path, 1, 1, "the offer states nothing: give gpus, cpus, ram, nvme or storage");
  return o;
}

Offer ParseOfferSpec(const std::string& spec, const std::vector<KnownBoard>& boards) {
  if (spec.size() > 1024) throw FlagError("--expect", "longer than 1024 bytes");
  if (ControlCharAt(spec) || InvalidUtf8At(spec)) throw FlagError("--expect", "holds a control character");
  Offer o;
  auto parts = Parts(spec);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string part(Trim(parts[i]));
    const size_t eq = part.find('=');
    if (i == 0 && eq == std::string::npos) {
      auto [n, board] = Count(part, "GPU");
      if (board.size() >= 2 && board.front() == '"' && board.back() == '"')
        board = board.substr(1, board.size() - 2);
      SetGpus(o, n, board, boards, part, At{});
      continue;
    }
    if (eq == std::string::npos) Bad(part, "expected KEY=VALUE (cpus, ram, nvme, storage)");
    const std::string k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "cpus") {
      o.cpus = Cpus(part, v);
    } else if (k == "ram") {
      o.ram_bytes = Size(part, v);
    } else if (k == "nvme") {
      auto [n, size] = Count(v, "NVMe");
      o.nvme_count = n;
      o.nvme_bytes = Size(part, size);
    } else if (k == "storage") {
      o.storage.push_back(StorageFloorOf(part, v));
    } else {
      Bad(part, "unknown key (cpus, ram, nvme, storage)");
    }
  }
  return o;
}

}  // namespace gp::accept
