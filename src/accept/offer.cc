#include "accept/offer.h"

#include "size/settings.h"
#include "util/error.h"
#include "util/input.h"
#include "util/strings.h"

namespace gp::accept {
namespace {

[[noreturn]] void Bad(const std::string& part, const std::string& why) {
  throw FlagError("--expect", QuoteToken(part) + ": " + why);
}

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

uint64_t Size(const std::string& part, const std::string& text) {
  uint64_t b = 0;
  if (!size::ParseSize(text, &b) || b == 0) Bad(part, "not a size (2TB, 3.84TB, 1.5TiB)");
  return b;
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

}  // namespace

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
      const KnownBoard* b = FindBoard(board, boards);
      if (!b) {
        std::vector<std::string> names;
        names.reserve(boards.size());
        for (const auto& k : boards) names.push_back(k.name);
        auto near = DidYouMean(board, names);
        Bad(part, "no board of the catalogue is called that (`gpuprep size` lists them)" +
                      (near ? "; did you mean \"" + *near + "\"?" : std::string()));
      }
      o.gpus = n;
      o.board = board;
      o.pci_ids = b->pci_ids;
      o.board_mib = b->mib;
      continue;
    }
    if (eq == std::string::npos) Bad(part, "expected KEY=VALUE (cpus, ram, nvme)");
    const std::string k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "cpus") {
      auto n = ParseUnsigned(v);
      if (!n || *n == 0 || *n > (1u << 20)) Bad(part, "cpus must be a whole number");
      o.cpus = static_cast<int64_t>(*n);
    } else if (k == "ram") {
      o.ram_bytes = Size(part, v);
    } else if (k == "nvme") {
      auto [n, size] = Count(v, "NVMe");
      o.nvme_count = n;
      o.nvme_bytes = Size(part, size);
    } else {
      Bad(part, "unknown key (cpus, ram, nvme)");
    }
  }
  return o;
}

}  // namespace gp::accept
