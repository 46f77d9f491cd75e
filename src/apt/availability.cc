#include "apt/availability.h"

#include <string_view>

#include "util/input.h"
#include "util/strings.h"

namespace gp::apt {

namespace {

// A Packages file can be large (Ubuntu's universe: tens of MB); it is read only on a GPU host whose kernel
// lacks its headers, or on HGX Blackwell whose kernel lacks ib_umad (the packages a plan may add).
constexpr size_t kMaxPackagesFile = 512u << 20;

// Whether `text` has a stanza whose Package field is exactly `name` (or, with `prefix`, starts with it).
bool HasPackage(std::string_view text, std::string_view name, bool prefix) {
  const std::string field = "Package: " + std::string(name);
  for (size_t at = text.find(field); at != std::string_view::npos; at = text.find(field, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    const size_t end = at + field.size();
    if (prefix || end == text.size() || text[end] == '\n' || text[end] == '\r') return true;
  }
  return false;
}

}  // namespace

std::string KernelHeadersPackage(const std::string& kernel_release) {
  return "linux-headers-" + kernel_release;
}

std::string KernelHeadersMeta(const std::string& image_meta) {
  const std::string prefix = "linux-image-";
  if (!StartsWith(image_meta, prefix) || !ValidDebName(image_meta)) return "";
  const std::string flavour = image_meta.substr(prefix.size());
  if (flavour.empty() || (flavour[0] >= '0' && flavour[0] <= '9')) return "";
  for (const char* not_flavour : {"unsigned-", "extra-"})
    if (StartsWith(flavour, not_flavour)) return "";
  for (const char* not_flavour : {"-dbg", "-dbgsym", "-signed-template"})
    if (EndsWith(flavour, not_flavour)) return "";
  return "linux-headers-" + flavour;
}

ListsAnswer FindKernelPackage(const sys::Fs& fs, const std::string& lists_dir, const std::string& package,
                              std::string from) {
  ListsAnswer out;
  out.from = std::move(from);
  if (!ValidDebName(package)) {
    out.state = Availability::kMissing;
    return out;
  }
  bool kernel_archive = false, unreadable = false;
  for (const auto& name : fs.List(lists_dir)) {
    if (!EndsWith(name, "_Packages")) continue;
    auto text = fs.ReadPrefix(lists_dir + "/" + name, kMaxPackagesFile + 1);
    if (!text || text->size() > kMaxPackagesFile) {
      unreadable = true;
      continue;
    }
    if (HasPackage(*text, package, false)) {
      out.state = Availability::kAvailable;
      return out;
    }
    kernel_archive = kernel_archive || HasPackage(*text, "linux-headers-", true);
  }
  out.state = kernel_archive && !unreadable ? Availability::kMissing : Availability::kUnknown;
  return out;
}

}  // namespace gp::apt
