#include "redist/state.h"

namespace gp::redist {

State Inspect(const sys::Fs& fs, const Request& req) {
  State s;
  const std::string want = req.prefix.substr(req.prefix.rfind('/') + 1);
  auto current = fs.ReadLink(req.current_link);
  if (current) s.found = *current;
  if (!fs.IsDir(req.prefix + "/lib")) {
    s.detail = "missing: " + req.prefix + (current ? " (" + req.current_link + " -> " + *current + ")" : "");
  } else if (!current || *current != want) {
    s.detail = req.current_link + (current ? " points at " + *current : " is missing") + ", not " + want;
  } else if (fs.Read(req.ldconf_path) != LdConfText(req.current_link)) {
    s.detail = "the loader entry " + req.ldconf_path + " is missing or changed";
  } else {
    s.installed = true;
    s.detail = "installed in " + req.prefix + " (" + req.current_link + ")";
  }
  return s;
}

}  // namespace gp::redist
