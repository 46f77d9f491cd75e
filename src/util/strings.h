// Small string helpers shared by every folder. No dependencies beyond the standard library.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp {

std::string_view Trim(std::string_view s);
// Splits on `sep`; keeps empty fields.
std::vector<std::string> Split(std::string_view s, char sep);
// Splits on runs of blanks (space/tab); no empty fields.
std::vector<std::string> SplitWords(std::string_view s);
// The last line of `text` that is not blank, trimmed ("" when none): a program's one-line error.
std::string LastLine(std::string_view text);
// Inline: the readers of large files (the dpkg database) call these per line, mostly with literals.
inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string ToLower(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// Whether `items` holds `s`.
bool Contains(const std::vector<std::string>& items, std::string_view s);
// Parses a whole string as a non-negative decimal integer; nullopt on any other character or overflow.
std::optional<unsigned long long> ParseUnsigned(std::string_view s);
// Levenshtein distance (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` if it is close enough to be a likely typo (distance <= max(1, len/3)),
// else nullopt.
std::optional<std::string> DidYouMean(std::string_view word, const std::vector<std::string>& candidates);
// "85520809984" -> "79.6 GiB"; exact powers print without decimals ("64 MiB").
std::string HumanBytes(unsigned long long bytes);
// A size as Docker reads --shm-size and --memory (go-units' RAMInBytes): a decimal number, one optional
// space, an optional unit k, m, g, t or p (binary multiples, any case) with an optional i and an optional b:
// "64m", "1g", "16GiB", "1.5G", "512 MB", "67108864". A fraction is truncated to whole bytes ("0.3MB" is
// 314572). nullopt for anything else, and for 2^63 bytes or more (where Docker's int64 overflows).
std::optional<unsigned long long> ParseBytes(std::string_view s);
// Every other size (GPU memory, RAM, storage, a Task, an Offer, prices): a decimal number, then nothing or
// "b" (bytes), a decimal unit kB, MB, GB, TB or PB (10^3 to 10^15) or a binary one KiB to PiB (2^10 to
// 2^50), in any case, no space: "80GB" is 80 x 10^9, "80GiB" 80 x 2^30. A bare unit letter ("80G") is
// refused: Docker reads it as binary, a data sheet as decimal. Rounded to whole bytes; false for anything
// else, and for 2^63 bytes or more.
bool ParseSize(std::string_view text, uint64_t* out);
// The end of the error for a refused size written with a bare unit letter ("80G"): how to write either
// meaning ("; write 80GB for 80 x 10^9 bytes or 80GiB for 80 x 2^30"); "" for any other text.
std::string BareUnitHint(std::string_view text);

}  // namespace gp
