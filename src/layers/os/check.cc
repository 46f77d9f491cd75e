// os layer: the stack supports this OS; dpkg is not half-way through something; no reboot is pending.
#include "layers/check.h"

#include "layers/table.h"
#include "util/strings.h"
#include "verdict/rules.h"

namespace gp::layers {

LayerReport CheckOs(const CheckInput& in) {
  LayerReport r;
  r.name = "os";
  const probe::OsInfo& os = in.host.os;
  std::vector<std::string> targets;
  for (const auto& t : in.stack.os) targets.push_back(t.id + " " + t.version_id);
  r.wanted = Join(targets, ", ");
  std::string label = os.id.empty() ? "" : os.id + " " + os.version_id;
  if (!os.pretty_name.empty())
    r.found = os.pretty_name;
  else if (!label.empty())
    r.found = label;

  if (os.id.empty()) {
    r.Add("os.unknown", Status::kFail, "no /etc/os-release: the operating system is unknown",
          "probe a complete system (the --root tree needs etc/os-release)");
  } else if (!in.stack.SupportsOs(os.id, os.version_id)) {
    r.Add("os.unsupported", Status::kFail,
          label + " is not a system of stack " + in.stack.name + " (" + r.wanted + ")",
          "choose a stack for " + label + ": gpuprep manifest list");
  } else {
    r.Add("os.supported", Status::kOk, label + " is supported by stack " + in.stack.name);
  }
  if (!in.host.dpkg_interrupted.empty()) {
    r.Add("os.dpkg-interrupted", Status::kFail,
          "dpkg was interrupted with packages half-configured (" + Join(in.host.dpkg_interrupted, ", ") + ")",
          "sudo dpkg --configure -a");
  }
  if (in.host.reboot_required)
    r.Add("os.reboot-pending", Status::kWarn, "a reboot is pending (/var/run/reboot-required)",
          "sudo reboot");
  return r;
}

extern const Layer kOsLayer = {"os", CheckOs, nullptr, nullptr, nullptr, nullptr};

}  // namespace gp::layers
