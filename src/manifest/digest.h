// What a stack name stands for: its pinned content, a content hash over it, and the hashes of the stacks
// gpuprep has shipped (manifests/shipped-stacks.lock). A shipped stack is immutable: its name stands for
// exactly the content its lock line hashes, so a host that converged to it never sees it move; new versions
// come as new stacks under new names.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "manifest/model.h"

namespace gp::manifest {

// The values of a stack that decide what `apply` puts on a host, in a fixed order, as (field, value) pairs:
// the driver (branch, version, flavour, signed modules, packages, fabric-manager packages), CUDA, cuDNN,
// NCCL and the container toolkit (enabled, version, CUDA major, source, redistributable release and
// components, packages), the image (reference and digest) and the docker section. Not part of it: where
// things come from (repositories and their keys, a redistributable base, an image mirror), what the stack
// claims (os, architectures, boards), facts about the pins (end of life, legacy, the image's CUDA, driver
// requirements), the workload profile and descriptions. A site file that only moves repositories (a mirror)
// therefore has the content of the stack it extends.
// Contract for future fields: a new field joins the list only when it differs from its default, so the
// content (and the hash) of every stack shipped before stays what it was.
using PinnedContent = std::vector<std::pair<std::string, std::string>>;
PinnedContent PinnedContentOf(const Stack& s);

// "sha256:<64 hex>" over the pinned content (one "field=value" line each, after a "gpuprep stack content v1"
// line). For an embedded stack this is its shipped-stacks.lock entry (the unit tests hold the two equal), so
// no hashing library is loaded; any other stack is hashed here (libcrypto, loaded on first use).
std::string ContentHash(const Stack& s);

// The same hash computed from the content, always (what the lock's test compares against).
std::string ComputeContentHash(const Stack& s);

// What `--manifest-sha256` pins (docs/cli.md): the sha256 (64 lower-case hex digits) of the stack's document
// as read, the bytes `sha256sum FILE` hashes; for a stack that extends others, the sha256 of the list of its
// documents' sha256s, one per line ("HEX\n"), its own first. Every byte of every document counts,
// repositories and keys included (ContentHash leaves those out). libcrypto is loaded on first use.
std::string DocumentsSha256(const Stack& s);

// One line of manifests/shipped-stacks.lock: "NAME sha256:HEX".
struct ShippedStack {
  std::string name;
  std::string hash;
};
// Every entry of the embedded lock, in file order. Throws gp::FileError for a malformed line.
const std::vector<ShippedStack>& ShippedStacks();
std::vector<ShippedStack> ParseShippedStacks(const std::string& text, const std::string& display_path);

// The embedded stack whose content equals `hash`, or nullopt (a site file that pins other versions). Stacks
// that differ only in what they claim (hopper and blackwell: architectures) share a hash: then the first of
// `prefer` that has it (a stack's own name, then its extends chain nearest first), else the first in the
// lock.
std::optional<std::string> EmbeddedStackWithHash(const std::string& hash,
                                                 const std::vector<std::string>& prefer = {});
// The embedded stack `s` is by content: EmbeddedStackWithHash(ContentHash(s)) preferring its name and extends
// chain.
std::optional<std::string> EmbeddedIdentity(const Stack& s);

// One difference between two stacks' pinned contents: {"driver.version", "580.95.05", "580.173.02"}; "" for
// a field one of them does not have.
struct PinChange {
  std::string field, from, to;
};
std::vector<PinChange> PinChanges(const Stack& from, const Stack& to);

// "sha256:" followed by 64 lower-case hex digits.
bool IsContentHash(const std::string& s);

}  // namespace gp::manifest
