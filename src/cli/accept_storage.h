// `gpuprep accept --storage PATH`: the directories checked before anything is measured (each an existing
// directory with room for the file), then one checkpoint-sized file written and read back in each by
// gpuprep itself (accept/storage.h through sys/scratch_file.h), judged against the offer's floors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "accept/judge.h"
#include "cli/context.h"

namespace gp::cli {

// The bytes each directory gets: the task's checkpoint (--task), else --storage-size, else 16 GB.
uint64_t StorageBytes(Context& ctx, const std::string& task, const std::string& storage_size);

// Refuses (FlagError "--storage", exit 2) a path that is not an existing directory, or one without room for
// `bytes` (statvfs), before anything is written or measured.
void CheckStorageDirs(const std::vector<std::string>& dirs, uint64_t bytes);

// Measures each directory in turn; the file is removed on every path. Throws Error (exit 1) when a stop
// (Ctrl-C, SIGTERM) was requested.
std::vector<accept::Check> MeasureStorageDirs(Context& ctx, const std::vector<std::string>& dirs,
                                              uint64_t bytes,
                                              const std::vector<accept::StorageFloor>& floors);

}  // namespace gp::cli
