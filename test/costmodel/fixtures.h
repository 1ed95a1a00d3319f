#pragma once
// Shared test fixtures for the cost-model tests: a plausible root-kernel
// feature row with knobs, and small synthetic pipelines.

#include <random>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "costmodel/cost_model.h"
#include "costmodel/tools/synthetic_states.h"
#include "test/gpu_profiles.h"

namespace gpusched::test {

// A memory-bound elementwise kernel over 4M floats, 256 threads x 4 points,
// perfectly coalesced, half occupancy.
inline ScheduleFeatures root_kernel_row() {
    using F = ScheduleFeature;
    ScheduleFeatures f;
    const double points = 4.0 * 1024 * 1024, threads = 256, per_thread = 4;
    const double blocks = points / (threads * per_thread);
    f[F::num_realizations] = 1;
    f[F::num_productions] = 1;
    f[F::points_computed_per_realization] = points;
    f[F::points_computed_per_production] = points;
    f[F::points_computed_total] = points;
    f[F::points_computed_minimum] = points;
    f[F::num_scalars] = points;
    f[F::innermost_loop_extent] = per_thread;
    f[F::innermost_pure_loop_extent] = per_thread;
    f[F::unrolled_loop_extent] = per_thread;
    f[F::inner_parallelism] = blocks * threads;
    f[F::outer_parallelism] = 1;
    f[F::num_tasks] = blocks;
    f[F::points_computed_per_thread] = per_thread;
    f[F::num_blocks] = blocks;
    f[F::num_threads_per_block] = threads;
    f[F::num_warps_per_block] = threads / 32;
    f[F::num_active_warps_per_block] = threads / 32;
    f[F::warp_lane_utilization] = 1;
    f[F::block_occupancy] = threads / 1024;
    f[F::max_block_occupancy] = 0.25;
    f[F::max_warp_occupancy] = 0.5;
    f[F::unique_global_bytes_read_per_realization] = points * 4;
    f[F::unique_global_lines_read_per_realization] = 2048;
    f[F::unique_global_bytes_read_per_thread] = per_thread * 4;
    f[F::unique_global_lines_read_per_thread] = 1;
    f[F::unique_bytes_read_per_point] = 4;
    f[F::unique_lines_read_per_point] = 1;
    // One load and one store of 4 points per thread: 4 instructions per warp,
    // 4 sectors each (128 B per warp), 8 warps.
    f[F::num_global_mem_loads_per_block] = 8 * 4 * 4;
    f[F::num_global_mem_stores_per_block] = 8 * 4 * 4;
    f[F::global_mem_load_efficiency] = 1;
    f[F::global_mem_store_efficiency] = 1;
    f[F::shared_mem_load_efficiency] = 1;
    f[F::shared_mem_store_efficiency] = 1;
    f[F::global_bytes_at_task] = threads * per_thread * 4;
    f[F::global_innermost_bytes_at_task] = threads * per_thread * 4;
    f[F::working_set_at_thread] = 2 * per_thread * 4;
    f[F::expr_branching] = 2;
    return f;
}

inline PipelineFeatures simple_pipeline_stage() {
    PipelineFeatures p;
    p.op(OpType::Add, ScalarTypeBucket::Float) = 2;
    p.op(OpType::Mul, ScalarTypeBucket::Float) = 1;
    p.op(OpType::FuncCall, ScalarTypeBucket::Float) = 1;
    p.access(AccessPattern::Pointwise, AccessType::LoadFunc, ScalarTypeBucket::Float) = 1;
    p.access(AccessPattern::Pointwise, AccessType::Store, ScalarTypeBucket::Float) = 1;
    return p;
}

// A random synthetic pipeline and n random featurized states of it (H100).
struct SyntheticBatch {
    SyntheticPipeline pipeline;
    std::vector<StateFeatures> states;
    std::vector<const StateFeatures *> pointers() const {
        std::vector<const StateFeatures *> p;
        for (const StateFeatures &s : states)
            p.push_back(&s);
        return p;
    }
};

inline SyntheticBatch synthetic_batch(std::mt19937_64 &rng, int n) {
    SyntheticBatch b;
    b.pipeline = random_synthetic_pipeline(rng);
    for (int i = 0; i < n; ++i)
        b.states.push_back(random_synthetic_state(b.pipeline, h100(), rng));
    return b;
}

inline std::string tmp_path(const std::string &name) {
    return std::string(GPUSCHED_COSTMODEL_TEST_TMP) + "/" + name;
}

} // namespace gpusched::test
