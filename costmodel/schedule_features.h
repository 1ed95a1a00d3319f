#pragma once
// Schedule features: what one scheduled stage of a pipeline looks like to the
// cost model. A stage's features depend on the whole loop nest around it (its
// compute/store location, its tiling into blocks/threads/serial loops, and
// where its producers live), so the search core computes them from its loop
// nest (core/featurize_schedule.*) and the cost model consumes them as a
// fixed-length vector of doubles.
//
// The list is the basic per-stage features of Adams et al. 2019 plus the GPU
// features of Anderson et al. 2021, appendix A. Exact definitions and units:
// docs/features.md. The order is part of the weights-file format: append new
// features at the end and bump kScheduleFeatureLayoutVersion.
//
// Invariant: every value is finite and >= 0 (ratios lie in [0, 1] unless
// their definition says otherwise).

#include <array>
#include <cstddef>

namespace gpusched {

// X(name): one line per feature, in weights-file order.
#define GPUSCHED_SCHEDULE_FEATURES(X)                                                                        \
    /* Adams 2019 basics */                                                                                  \
    X(num_realizations)                                                                                      \
    X(num_productions)                                                                                       \
    X(points_computed_per_realization)                                                                       \
    X(points_computed_per_production)                                                                        \
    X(points_computed_total)                                                                                 \
    X(points_computed_minimum)                                                                               \
    X(innermost_loop_extent)                                                                                 \
    X(innermost_pure_loop_extent)                                                                            \
    X(unrolled_loop_extent)                                                                                  \
    X(inner_parallelism)                                                                                     \
    X(outer_parallelism)                                                                                     \
    X(bytes_at_realization)                                                                                  \
    X(bytes_at_production)                                                                                   \
    X(bytes_at_root)                                                                                         \
    X(innermost_bytes_at_realization)                                                                        \
    X(innermost_bytes_at_production)                                                                         \
    X(innermost_bytes_at_root)                                                                               \
    X(inlined_calls)                                                                                         \
    X(unique_bytes_read_per_realization)                                                                     \
    X(unique_lines_read_per_realization)                                                                     \
    X(allocation_bytes_read_per_realization)                                                                 \
    X(working_set)                                                                                           \
    X(num_scalars)                                                                                           \
    X(unique_bytes_read_per_point)                                                                           \
    X(unique_lines_read_per_point)                                                                           \
    X(unique_bytes_read_per_task)                                                                            \
    X(unique_lines_read_per_task)                                                                            \
    X(working_set_at_task)                                                                                   \
    X(working_set_at_production)                                                                             \
    X(working_set_at_realization)                                                                            \
    X(working_set_at_root)                                                                                   \
    X(num_tasks)                                                                                             \
    /* Anderson 2021 appendix A: GPU features */                                                             \
    X(points_computed_per_thread)                                                                            \
    X(unique_global_bytes_read_per_realization)                                                              \
    X(unique_shared_bytes_read_per_realization)                                                              \
    X(unique_register_bytes_read_per_realization)                                                            \
    X(unique_global_lines_read_per_realization)                                                              \
    X(unique_shared_lines_read_per_realization)                                                              \
    X(unique_register_lines_read_per_realization)                                                            \
    X(unique_global_bytes_read_per_thread)                                                                   \
    X(unique_shared_bytes_read_per_thread)                                                                   \
    X(unique_register_bytes_read_per_thread)                                                                 \
    X(unique_global_lines_read_per_thread)                                                                   \
    X(unique_shared_lines_read_per_thread)                                                                   \
    X(unique_register_lines_read_per_thread)                                                                 \
    X(global_allocation_bytes_read_per_realization)                                                          \
    X(shared_allocation_bytes_read_per_realization)                                                          \
    X(register_allocation_bytes_read_per_realization)                                                        \
    X(global_bytes_at_task)                                                                                  \
    X(shared_bytes_at_task)                                                                                  \
    X(register_bytes_at_task)                                                                                \
    X(global_innermost_bytes_at_task)                                                                        \
    X(shared_innermost_bytes_at_task)                                                                        \
    X(register_innermost_bytes_at_task)                                                                      \
    X(num_blocks)                                                                                            \
    X(num_warps_per_block)                                                                                   \
    X(num_active_warps_per_block)                                                                            \
    X(num_threads_per_block)                                                                                 \
    X(expr_branching)                                                                                        \
    X(block_occupancy)                                                                                       \
    X(warp_lane_utilization)                                                                                 \
    X(idle_lane_wastage)                                                                                     \
    X(num_shared_mem_loads_per_block)                                                                        \
    X(num_global_mem_loads_per_block)                                                                        \
    X(num_shared_mem_stores_per_block)                                                                       \
    X(num_global_mem_stores_per_block)                                                                       \
    X(shared_mem_store_efficiency)                                                                           \
    X(shared_mem_load_efficiency)                                                                            \
    X(global_mem_store_efficiency)                                                                           \
    X(global_mem_load_efficiency)                                                                            \
    X(working_set_at_thread)                                                                                 \
    X(shared_mem_occupancy)                                                                                  \
    X(shared_mem_block_limit_factor)                                                                         \
    X(max_warp_occupancy)                                                                                    \
    X(max_block_occupancy)

enum class ScheduleFeature : int {
#define GPUSCHED_X(name) name,
    GPUSCHED_SCHEDULE_FEATURES(GPUSCHED_X)
#undef GPUSCHED_X
        Count
};

inline constexpr int kNumScheduleFeatures = static_cast<int>(ScheduleFeature::Count);
// Bump whenever the list above changes; weights files record it.
inline constexpr int kScheduleFeatureLayoutVersion = 1;

// The feature's name as written in the list above (for docs, dumps and the DB).
const char *schedule_feature_name(ScheduleFeature f);

struct ScheduleFeatures {
    std::array<double, kNumScheduleFeatures> values{};

    double &operator[](ScheduleFeature f) { return values[static_cast<std::size_t>(f)]; }
    double operator[](ScheduleFeature f) const { return values[static_cast<std::size_t>(f)]; }
};

// The row of an inlined Func (docs/features.md, "Inlined Funcs"): its total
// call count as inlined_calls, scalars and points, one block of one thread,
// every other feature 0; its loads are counted in its consumers' rows. One
// definition, so the search, the synthetic training states and the tests
// cannot disagree on the convention the cost formula reads.
ScheduleFeatures inlined_stage_row(double total_calls);

} // namespace gpusched
