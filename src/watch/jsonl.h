// `watch --json`: JSON Lines, one record per line, each with "type" ("sample", "verdict", "summary")
// and "schema" (kSchema). Times are RFC 3339 UTC with milliseconds; units are in the key names; a
// counter that is not supported is null. ParseRecord reads back exactly what the encoders write (the
// replay of a recorded run), and validates everything else as hostile input. The contract is
// docs/json.md, "watch".
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "watch/sample.h"
#include "watch/verdict.h"

namespace gp::watch {

inline constexpr int kSchema = 1;

nlohmann::ordered_json SampleJson(const Sample& s);
nlohmann::ordered_json VerdictJson(const Verdict& v);
nlohmann::ordered_json SummaryJson(const Summary& s);

// "2026-11-29T10:15:00.123Z" and back (nullopt for anything else).
std::string Rfc3339(long long ms);
std::optional<long long> ParseRfc3339(std::string_view text);

struct Record {
  enum class Type { kSample, kVerdict, kSummary } type = Type::kSample;
  Sample sample;         // kSample
  long long end_ms = 0;  // kSummary: the end of the run
};

// One line of a recording. Throws gp::FileError (PATH:LINE:COL) for anything that is not a record of
// this schema; a record of an unknown type is an error too.
Record ParseRecord(std::string_view line, const std::string& path, size_t line_number);

// Largest line a recording may hold.
inline constexpr size_t kMaxRecordBytes = 8u << 20;

}  // namespace gp::watch
