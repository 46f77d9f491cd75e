// Why Fs::Read gave nothing, for an error line that says what happened instead of "not found".
#pragma once
#include <optional>
#include <string>

#include "sys/fs.h"

namespace gp::sys {

// The end of an error line: "cannot read FILE: no such file", "...: too many levels of symbolic links",
// "...: a directory, not a file", "...: not a regular file, or permission denied", "...: larger than the
// 1 MiB limit" (`limit`: the limit the file was read under). `shown` is how the path is named in the message.
std::string WhyUnreadable(const Fs& fs, const std::string& path, const std::string& shown,
                          size_t limit = kMaxRead);

// The whole of a regular file of at most `limit` bytes, reading no more than limit + 1 of it: its text, or
// nullopt with `why` set to WhyUnreadable's line for that limit.
std::optional<std::string> ReadWithin(const Fs& fs, const std::string& path, const std::string& shown,
                                      size_t limit, std::string& why);

}  // namespace gp::sys
