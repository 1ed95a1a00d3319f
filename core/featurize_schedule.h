#pragma once
// Schedule featurization: turns each scheduled stage of a LoopNest into the
// ScheduleFeatures row the cost model reads (costmodel/schedule_features.h):
// the per-stage basics of Adams et al. 2019 and the GPU features of Anderson
// et al. 2021 appendix A (memory transactions with coalescing and bank
// conflicts for a regular and a tail warp, efficiencies, footprints per
// memory level, blocks/warps/threads, occupancy, register working set).
//
// Invariant: every value written is finite and >= 0. Where a feature cannot
// be computed exactly from the concrete estimates, the approximation used is
// stated next to its computation in the .cpp.

#include <cstdint>
#include <list>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/gpu_profile.h"
#include "core/loop_nest.h"
#include "costmodel/cost_model.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

// Features of stages[index] of the nest, but working_set_at_root (0 here),
// which depends on the whole state's root allocations: featurize() sets it.
ScheduleFeatures featurize_stage(const LoopNest &nest, int index, const GpuProfile &gpu);

// Memoized featurization per kernel (Anderson et al. 2021 sec. 3.3): a
// kernel's rows depend only on the decisions of the Funcs in the kernel and
// on how its producers are stored (and what inlined ones read), so they are
// keyed by exactly that. The one feature that depends on allocations
// outside the kernel (working_set_at_root) is recomputed for every state.
//
// Memory is bounded: past max_bytes the least recently used kernels are
// evicted (the paper never evicts; its BGU search needed 19 GB). Lookups
// hash the key and compare it whole, so a collision is never a wrong hit.
class FeatureMemo {
public:
    static constexpr size_t kDefaultMaxBytes = size_t(64) << 20;
    explicit FeatureMemo(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

    // A kernel's rows in its stage order and, where known, each row's
    // RowCostCache::prefix (StateFeatures::row_hashes).
    struct KernelRows {
        std::vector<ScheduleFeatures> rows;
        std::vector<RowCostCache::Prefix> hashes; // empty or one per row
    };
    // The cached rows, or null; a hit becomes the most recently used entry.
    // The pointer is valid until the next insert().
    const KernelRows *find(const std::vector<int64_t> &key);
    void insert(std::vector<int64_t> key, KernelRows rows);

    size_t bytes() const { return bytes_; }
    size_t size() const { return lru_.size(); }
    int64_t hits = 0, misses = 0, evictions = 0;

private:
    struct Entry {
        uint64_t hash;
        std::vector<int64_t> key;
        KernelRows rows;
        size_t bytes;
    };
    std::list<Entry> lru_; // front: most recently used
    std::unordered_multimap<uint64_t, std::list<Entry>::iterator> index_;
    size_t bytes_ = 0, max_bytes_;
};

// One row per scheduled stage, with dense stage ids (FunctionDAG::stage_id),
// in the nest's stage order. With a memo, kernels seen before are reused.
StateFeatures featurize(const LoopNest &nest, const GpuProfile &gpu, FeatureMemo *memo = nullptr);

// featurize() of a nest just retiled in place (LoopNest::retile_root_stage)
// at root stage `stage` (an index into nest.stages), given the features of
// the nest it was retiled from (featurize or this, with the same memo or
// none). Only that stage's kernel, which holds it alone, changed: every
// other kernel's key (kernel_key: its own decisions and how its producers
// are stored) is the same, so its rows are `before`'s, and so are the
// allocations at root and the inlined Funcs' rows.
StateFeatures featurize_retiled(const LoopNest &nest, const GpuProfile &gpu, FeatureMemo *memo,
                                const StateFeatures &before, int stage);

} // namespace gpusched
