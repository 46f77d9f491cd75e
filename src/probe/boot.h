// Installed kernels and the next boot: the pure readers of the files the kernels step reads
// (probe/kernels.cc, probe/grub.cc). Every input is a file of the host, so each is bounded and each name
// checked before it reaches a path.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gp::probe {

// A kernel release as it may name a package and a path: starts with a digit, then [a-z0-9.+-] (what
// linux-image-K needs to be a Debian package name), at most 64 characters.
bool ValidKernelRelease(std::string_view k);

// The nvidia.ko entry of a kernel's modules.dep ("updates/dkms/nvidia.ko.zst: ..."): the first of
// updates/dkms/nvidia.ko[.zst|.xz] or a kernel/.../nvidia.ko[.zst|.xz]; "" when none. An absolute
// "/lib/modules/K/" prefix is dropped.
std::string NvidiaInModulesDep(std::string_view modules_dep);
// 535 from a packaged module's directory ("kernel/nvidia-535srv/nvidia.ko"); 0 when none.
int BranchFromModulePath(std::string_view path);

// The last error line of a DKMS make.log (a compiler's "error:" line, else make's "*** ... Error N"),
// made terminal-safe and cut to 200 bytes and "..." when longer; "" when none.
std::string LastErrorLine(std::string_view make_log);

// GRUB_DEFAULT from /etc/default/grub-style shell text: the last plain assignment, unquoted ("" unset).
// A value made by the shell (`$`, backquotes) gives nullopt: it cannot be known without running it.
std::optional<std::string> ParseGrubDefaultVar(std::string_view text, bool* set);

// A grubenv variable ("saved_entry", "next_entry"); "" when absent.
std::string GrubEnvVar(std::string_view grubenv, std::string_view name);

// grub.cfg's menu as written: menu entries and submenus in order, with their titles, ids and (entries) the
// kernel their `linux` line boots.
struct GrubEntry {
  std::string title;
  std::string id;      // $menuentry_id_option / --id
  std::string kernel;  // "6.8.0-60-generic" from linux /boot/vmlinuz-K ("" none or invalid)
  bool submenu = false;
  std::vector<GrubEntry> children;
};
struct GrubMenu {
  std::vector<GrubEntry> entries;
  std::string default_value;  // the last `set default=` outside the next_entry branch ("" none)
  bool default_found = false;
};
GrubMenu ParseGrubCfg(std::string_view text);

// The entry a GRUB default names: "0", "1>2", a title, an id, or such parts joined by '>'. nullptr when it
// names none (or a submenu itself).
const GrubEntry* ResolveGrubEntry(const GrubMenu& menu, std::string_view spec);

}  // namespace gp::probe
