// Whether apt could install a kernel package by name (the running kernel's headers, which DKMS needs to
// build NVIDIA's module), read from the Packages files apt keeps in a lists directory: the host's
// /var/lib/apt/lists, or a private one that apply fetches from the host's own sources before any change.
#pragma once
#include <string>

#include "sys/fs.h"

namespace gp::apt {

enum class Availability { kUnknown, kAvailable, kMissing };

struct ListsAnswer {
  Availability state = Availability::kUnknown;
  std::string from;  // where the answer was read, for messages: "the host's apt lists"
};

// kAvailable when a Packages file in `lists_dir` has a stanza for `package`. kMissing when none has, every
// Packages file there could be read, and at least one carries kernel header packages (a distribution
// archive was read: it would list `package` if it still published it). kUnknown otherwise: no lists,
// compressed lists (Acquire::GzipIndexes), or only third-party repositories. A `package` that is not a
// valid Debian package name (a kernel release with capitals) cannot exist: kMissing.
ListsAnswer FindKernelPackage(const sys::Fs& fs, const std::string& lists_dir, const std::string& package,
                              std::string from);

// The name of the kernel headers package for a kernel release: "linux-headers-6.8.0-48-generic".
std::string KernelHeadersPackage(const std::string& kernel_release);

// The headers meta package that follows kernel meta package `image_meta`, so every kernel the meta brings
// comes with its headers and DKMS can build for it: linux-image-generic-hwe-22.04 ->
// linux-headers-generic-hwe-22.04, linux-image-aws -> linux-headers-aws, linux-image-cloud-amd64 ->
// linux-headers-cloud-amd64 (Ubuntu's and Debian's meta packages pair by flavour:
// https://packages.ubuntu.com/jammy/linux-headers-generic-hwe-22.04,
// https://packages.debian.org/bookworm/linux-headers-cloud-amd64). "" when `image_meta` is no flavour
// meta: a release's own image (linux-image-6.8.0-60-generic, linux-image-unsigned-6.8.0-60-generic), the
// extra-modules metas (linux-image-extra-virtual), debug symbols, the signing templates, or a name that is
// not a valid Debian package name.
std::string KernelHeadersMeta(const std::string& image_meta);

}  // namespace gp::apt
