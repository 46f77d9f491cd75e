// Embedded manifests parsed at BUILD time: tools/gpuprep_embed.cc runs ParseTree (tree.cc, yaml-cpp) over
// every manifests/**/*.yaml and writes generated/manifest_trees.cc, a static table of nodes with their
// scalars and positions. At run time the trees of compat.yaml and the embedded stacks are rebuilt from that
// table (nothing is parsed); user files, and the embedded profiles (launch/profile.cc hands their text to
// manifest/profile.cc), still go through ParseTree. A YAML error in an embedded file fails the build.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "manifest/tree.h"

namespace gp::manifest {

namespace prebuilt {

// One node of the generated table. Children of a list or map are kNodes[first, first + count). Its strings
// are offsets into kStrings, not pointers: the table needs no relocation when the program starts.
struct RawNode {
  unsigned char kind;  // Node::Kind
  int line, col;       // the node's mark (1-based)
  unsigned key_at;  // when the parent is a map: the key (kStrings[key_at, +key_len]) and where it is written
  unsigned key_len;
  int key_line, key_col;
  unsigned scalar_at;  // kScalar: kStrings[scalar_at, +scalar_len]
  unsigned scalar_len;
  unsigned first, count;
};

struct RawTree {
  const char* path;  // "manifests/compat.yaml"; nullptr ends the table
  unsigned root;     // index into kNodes
};

extern const RawNode kNodes[];
extern const char kStrings[];
extern const RawTree kTrees[];

inline std::string_view KeyOf(const RawNode& n) { return {kStrings + n.key_at, n.key_len}; }
inline std::string_view ScalarOf(const RawNode& n) { return {kStrings + n.scalar_at, n.scalar_len}; }

}  // namespace prebuilt

// The build-time tree of embedded manifest `path` (equal to ParseTree(its text, path): same kinds,
// scalars, marks and display path); nullopt when no such file was embedded.
std::optional<Node> PrebuiltTree(std::string_view path);

// The raw root of embedded manifest `path` (nullptr when none), and one raw node rebuilt as a tree: the
// readers that need only part of a file (the catalogue rows of one host) rebuild just those nodes.
const prebuilt::RawNode* PrebuiltRoot(std::string_view path);
Node PrebuiltNode(const prebuilt::RawNode& raw, const std::shared_ptr<const std::string>& file);

}  // namespace gp::manifest
