#include "redist/request.h"

#include "redist/error.h"
#include "redist/redistrib.h"
#include "util/strings.h"

namespace gp::redist {

std::string PrefixFor(const std::string& layer, const std::string& version, std::optional<int> cuda_major) {
  std::string name = version;
  if (cuda_major) name += "-cuda" + std::to_string(*cuda_major);
  return std::string(kRedistRoot) + "/" + layer + "/" + name;
}

std::string CurrentLinkFor(const std::string& layer) {
  return std::string(kRedistRoot) + "/" + layer + "/current";
}

std::string LdConfPathFor(const std::string& layer) { return "/etc/ld.so.conf.d/gpuprep-" + layer + ".conf"; }

std::string LdConfText(const std::string& current_link) {
  return "# gpuprep: NVIDIA redistributable install (" + current_link + ")\n" + current_link + "/lib\n";
}

// A directory becomes a file:// URL; its characters were limited when the stack was read
// (manifest/redist_spec.cc), so no escaping is needed beyond that.
std::string BaseUrl(const std::string& base) {
  std::string url = StartsWith(base, "/") ? "file://" + base : base;
  if (!EndsWith(url, "/")) url += "/";
  return url;
}

Request MakeRequest(const std::string& layer, const manifest::ComponentSpec& spec, const std::string& arch) {
  Request r;
  r.layer = layer;
  const std::string base = BaseUrl(spec.redist.base);
  r.json_url = base + "redistrib_" + spec.redist.release + ".json";
  r.json_sha256 = spec.redist.json_sha256;
  r.archive_base = base;
  r.components = spec.redist.components;
  r.platform = PlatformFor(arch);
  if (r.platform.empty()) throw RedistError("NVIDIA publishes no Linux redistributable archives for " + arch);
  r.cuda_major = layer == "cudnn" ? spec.cuda_major : std::nullopt;
  r.version = spec.version.known() ? spec.version.version->str() : "";
  r.prefix = PrefixFor(layer, r.version, r.cuda_major);
  r.current_link = CurrentLinkFor(layer);
  r.ldconf_path = LdConfPathFor(layer);
  return r;
}

}  // namespace gp::redist
