#pragma once
// Hierarchical sampling's buckets at a root tiling step (sec. 3.1, 4.4 of
// Anderson et al. 2021): the candidates of one parent grouped by their
// structural hash, from each bucket a few drawn at random. At a root tiling
// step every parent has the same options (root_tiling_options), and which
// options share a hash does not depend on the parent, so the buckets are
// made once per search and stage instead of hashing every option of every
// parent.

#include <cstddef>
#include <vector>

#include "core/search_space.h"

namespace gpusched {

// Bucket g holds options members[starts[g]] .. members[starts[g + 1] - 1],
// ascending; buckets in the order of their first option.
struct SamplingBuckets {
    std::vector<size_t> members;
    std::vector<size_t> starts;
    size_t count() const { return starts.empty() ? 0 : starts.size() - 1; }
};

// The options grouped by what func_structural_hash at `depth` reads of them
// (structural_thread_key, structural_serial_key; below depth 3 nothing, so
// one bucket). Under any parent that computes
// the stage's Func at root, two options share a bucket exactly when their
// structural hashes are equal (barring a 64-bit collision of the hash).
SamplingBuckets sampling_buckets(const RootTilingOptions &options, int depth);

} // namespace gpusched
