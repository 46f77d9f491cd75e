#include "launch/validate.h"

#include <algorithm>
#include <cctype>

#include "util/error.h"
#include "util/strings.h"

namespace gp::launch {

bool ValidEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool ValidContainerName(const std::string& n) {
  if (n.empty() || !std::isalnum(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

namespace {

bool DnsLabelOk(const std::string& l) {
  if (l.empty() || l.size() > 63 || l.front() == '-' || l.back() == '-') return false;
  return std::all_of(l.begin(), l.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

bool ValidExtendedResourceName(const std::string& n) {
  const size_t slash = n.find('/');
  if (slash == std::string::npos || n.find('/', slash + 1) != std::string::npos) return false;
  const std::string prefix = n.substr(0, slash), name = n.substr(slash + 1);
  if (prefix.empty() || prefix.size() + 9 > 253 || name.empty() || name.size() > 63) return false;
  if (prefix == "kubernetes.io" || EndsWith(prefix, ".kubernetes.io")) return false;
  for (const std::string& label : Split(prefix, '.'))
    if (!DnsLabelOk(label)) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&alnum](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

GpuSelection ParseGpus(const std::string& value) {
  GpuSelection sel;
  const std::string v(Trim(value));
  if (v == "all") return sel;
  if (v == "none") {  // a CPU-only container: no GPU, no driver or runtime check
    sel.kind = GpuSelection::Kind::kNone;
    return sel;
  }
  const bool device_form = StartsWith(v, "device=");
  const std::string list = device_form ? v.substr(7) : v;
  if (!device_form && list.find(',') == std::string::npos) {
    auto n = ParseUnsigned(list);
    if (!n || *n > 1024)
      throw FlagError("--gpus", "expected all, none, a count, a list of indices (0,1) or device=0,1; got \"" +
                                    value + "\"");
    if (*n == 0)  // docker reads "0" as a count too, silently starting a container without GPUs
      throw FlagError("--gpus",
                      "0 requests no GPU; for GPU index 0 use --gpus device=0 (or --gpus none for a CPU-only "
                      "container)");
    sel.kind = GpuSelection::Kind::kCount;
    sel.count = static_cast<int>(*n);
    return sel;
  }
  sel.kind = GpuSelection::Kind::kDevices;
  for (const std::string& part : Split(list, ',')) {
    auto n = ParseUnsigned(Trim(part));
    if (!n || *n > 1024)
      throw FlagError("--gpus",
                      "\"" + part + "\" is not a GPU index (expected a list such as 0,1 or device=0,1)");
    const int idx = static_cast<int>(*n);
    if (std::find(sel.indices.begin(), sel.indices.end(), idx) != sel.indices.end())
      throw FlagError("--gpus", "GPU " + std::to_string(idx) + " is listed twice");
    sel.indices.push_back(idx);
  }
  return sel;
}

Mount ParseMount(const std::string& value) {
  const std::vector<std::string> parts = Split(value, ':');
  if (parts.size() < 2 || parts.size() > 3)
    throw FlagError("-v", "expected SRC:DST or SRC:DST:ro, got \"" + value + "\"");
  Mount m{parts[0], parts[1], false};
  if (parts.size() == 3) {
    if (parts[2] == "ro")
      m.read_only = true;
    else if (parts[2] != "rw")
      throw FlagError("-v",
                      "unknown mount option \"" + parts[2] + "\" in \"" + value + "\" (expected ro or rw)");
  }
  if (m.source.empty() || m.source[0] != '/')
    throw FlagError("-v", "the source must be an absolute host path, got \"" + m.source + "\"");
  if (m.target.empty() || m.target[0] != '/')
    throw FlagError("-v", "the target must be an absolute container path, got \"" + m.target + "\"");
  return m;
}

std::pair<std::string, std::string> ParseEnv(const std::string& value) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos) throw FlagError("-e", "expected NAME=VALUE, got \"" + value + "\"");
  std::string name = value.substr(0, eq);
  if (!ValidEnvName(name))
    throw FlagError("-e", "invalid environment variable name \"" + name +
                              "\" (letters, digits and _, not starting with a digit)");
  return {name, value.substr(eq + 1)};
}

std::pair<std::string, int> ParseMaster(const std::string& value) {
  const size_t colon = value.rfind(':');
  const std::string addr = colon == std::string::npos ? "" : value.substr(0, colon);
  const auto port = colon == std::string::npos ? std::nullopt : ParseUnsigned(value.substr(colon + 1));
  if (addr.empty() || !port || *port == 0 || *port > 65535)
    throw FlagError("--master", "expected ADDR:PORT (e.g. 10.0.0.1:29500), got \"" + value + "\"");
  bool addr_ok = std::all_of(addr.begin(), addr.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' ||
           c == ']';
  });
  if (!addr_ok) throw FlagError("--master", "\"" + addr + "\" is not a host name or IP address");
  return {addr, static_cast<int>(*port)};
}

uint64_t ParseShm(const std::string& value) {
  auto b = ParseBytes(value);
  if (!b || *b == 0)
    throw FlagError("--shm", "expected auto or a size such as 16g or 512m, got \"" + value + "\"");
  return *b;
}

}  // namespace gp::launch
