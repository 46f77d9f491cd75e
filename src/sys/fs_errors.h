// Why Fs::Read gave nothing, for an error line that says what happened instead of "not found".
#pragma once
#include <string>

#include "sys/fs.h"

namespace gp::sys {

// The end of an error line: "cannot read FILE: no such file", "...: a directory, not a file",
// "...: not a regular file, or permission denied", "...: larger than the 64 MiB limit".
// `shown` is how the path is named in the message.
std::string WhyUnreadable(const Fs& fs, const std::string& path, const std::string& shown);

}  // namespace gp::sys
