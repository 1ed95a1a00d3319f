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
#include <map>
#include <vector>

#include "core/gpu_profile.h"
#include "core/loop_nest.h"
#include "costmodel/cost_model.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

// Features of stages[index] of the nest.
ScheduleFeatures featurize_stage(const LoopNest &nest, int index, const GpuProfile &gpu);

// Memoized featurization per kernel (Anderson et al. 2021 sec. 3.3): a
// kernel's rows depend only on the decisions of the Funcs in the kernel and
// on how its producers are stored (and what inlined ones read), so they are
// keyed by exactly that. The one feature that depends on allocations
// outside the kernel (working_set_at_root) is recomputed for every state.
class FeatureMemo {
public:
    static constexpr size_t kMaxKernels = 100000;
    int64_t hits = 0, misses = 0;
    std::map<std::vector<int64_t>, std::vector<ScheduleFeatures>> kernels;
};

// One row per scheduled stage, with dense stage ids (FunctionDAG::stage_id),
// in the nest's stage order. With a memo, kernels seen before are reused.
StateFeatures featurize(const LoopNest &nest, const GpuProfile &gpu, FeatureMemo *memo = nullptr);

namespace detail {
// Memory transactions one warp issues for the given element addresses of its
// active lanes (in elements of `bytes` bytes).
int64_t global_transactions(const std::vector<int64_t> &addresses, int bytes);  // 32-byte sectors
int64_t shared_transactions(const std::vector<int64_t> &addresses, int bytes, int banks);  // conflict degree
} // namespace detail

} // namespace gpusched
