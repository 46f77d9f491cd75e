// The host probe: turns a filesystem (live "/" or a --root tree), and on a live host the command runner,
// dlopen and the Docker socket, into HostFacts. Never throws for a missing component; never hangs
// (every subprocess and socket call has a timeout).
#pragma once
#include <map>
#include <string>

#include "manifest/model.h"
#include "probe/host.h"
#include "sys/fs.h"
#include "sys/http.h"
#include "sys/native.h"
#include "sys/process.h"

namespace gp::probe {

struct ProbeEnv {
  const sys::Fs* fs = nullptr;               // required
  sys::CommandRunner* runner = nullptr;      // null with --root: nothing is executed
  sys::NativeLibs* native = nullptr;         // null with --root: nothing is loaded
  sys::UnixHttp* docker = nullptr;           // null with --root: nothing is contacted
  const manifest::Compat* compat = nullptr;  // GPU catalogue and NVSwitch ids (required)
  std::map<std::string, std::string> env;    // PATH, CUDA_HOME, LD_LIBRARY_PATH, DOCKER_HOST
};

HostFacts ProbeHost(const ProbeEnv& env);
// Only what GPU health needs (doctor --health): the OS and identity (what a report names the host by), the
// GPU functions on the bus, the driver and NVML's answer per GPU, the services (persistence), the Xid
// history. Nothing of dpkg, CUDA, libraries or Docker.
HostFacts ProbeHealth(const ProbeEnv& env);

// doctor --since: the kernel's messages since `since` (probe/xid.h's ValidJournalSince, checked by the
// caller) from the journal, through the command runner (`journalctl -k -o export --since=SINCE`, 64 MiB and
// 20 seconds at most), in place of the ring buffer's Xid history: the journal keeps what the ring buffer
// has overwritten, and earlier boots. Without a runner (--root) the journal is not read: a note. A journal
// that cannot be read leaves the ring buffer's history, with a note saying why.
// An empty `since` reads this boot's kernel messages (`journalctl -k -b -o export`, 2 seconds at most:
// doctor --health), which keep what a wrapped ring buffer lost; a journal that does not reach the boot's own
// record leaves a ring buffer that does.
void ProbeXidJournal(const ProbeEnv& env, const std::string& since, HostFacts& facts);

// Asks the engine that answered the probe about image `ref` (one GET /images/{ref}/json over the socket;
// nothing else is loaded): present, digest, and the CUDA its config declares. No-op without an engine.
void ProbeImage(const ProbeEnv& env, const std::string& ref, HostFacts& facts);

// Reads image `ref`'s manifest and config from its registry (docker/registry.h; libcurl and libcrypto load
// here, so only on request) for the platform of `arch` (uname's "x86_64"), into `image`: from_registry and
// the CUDA its config declares, or registry_error.
void ProbeRegistryImage(sys::HttpClient& http, const std::string& ref, const std::string& arch,
                        ImageInfo& image);

}  // namespace gp::probe
