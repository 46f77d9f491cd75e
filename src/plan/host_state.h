// Host facts that apply re-reads between steps (after an install the probe's snapshot is stale):
// the loaded kernel module, nouveau, enabled units, and why a reboot is required. Files only.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "manifest/model.h"
#include "sys/fs.h"

namespace gp::plan {

// The loaded nvidia module's version from /proc/driver/nvidia/version (both NVRM formats) or
// /sys/module/nvidia/version; nullopt when no module is loaded.
std::optional<std::string> LoadedModuleVersion(const sys::Fs& fs);

// The version in an NVRM line ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.08  ...").
std::optional<std::string> ParseNvrmVersion(const std::string& text);

// A "blacklist nouveau" line in /etc/modprobe.d, /lib/modprobe.d or /usr/lib/modprobe.d (*.conf).
bool NouveauBlacklisted(const sys::Fs& fs);
bool NouveauLoaded(const sys::Fs& fs);  // /sys/module/nouveau exists

// A unit is enabled when a /etc/systemd/system/<target>.wants/<unit> link exists.
bool UnitEnabled(const sys::Fs& fs, const std::string& unit);

// Why a reboot is required, one sentence each; empty when none is. Detected, not guessed:
// /var/run/reboot-required exists; the stack's driver packages are installed at their pins but the
// loaded module is absent or another version; nouveau is still loaded although it is blacklisted.
std::vector<std::string> RebootReasons(const sys::Fs& fs, const manifest::Stack& stack);

}  // namespace gp::plan
