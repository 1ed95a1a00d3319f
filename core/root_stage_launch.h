#pragma once
// How a root Func's stage launches: its tiling into blocks, threads and
// serial points, a function of the stage's loops over the Func's whole
// region (Node::region, fixed for a DAG) and its StageTiling alone. The loop
// nest tiles every root stage with it, and the search judges a root tiling's
// soft criteria (blocks per SM, lanes used: core/search_space.h) with it
// before building the candidate's nest: most candidates of a large Func's
// tiling step fail them (random_s1's split intermediates: about 49,000 of
// 60,000 per tiling step), and a nest costs far more than this.

#include <array>
#include <cstdint>
#include <vector>

#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched {

// Per loop of st, over `loops` (its bounds over the Func's region): the
// serial points per thread, threads per block and blocks, as the nest tiles
// them. A loop the stage cannot tile (an RVar of a non-atomic update) runs
// whole in each thread. tiling null: untiled (one thread, one point per
// thread, in every tileable loop). Returns the blocks the stage launches.
int64_t tile_root_stage(const Stage &st, const std::vector<Span> &loops, const StageTiling *tiling,
                        std::vector<int64_t> &serial, std::vector<int64_t> &thread,
                        std::vector<int64_t> &block);

// The GPU thread dimensions of a stage with these thread counts per loop:
// its first three tileable loops (innermost first) with more than one
// thread, each the next slot (slot: per loop, -1 for none; shape: per slot).
// Returns the threads per block.
int64_t assign_thread_slots(const Stage &st, const std::vector<int64_t> &thread, std::vector<int> &slot,
                            std::array<int64_t, 3> &shape);

} // namespace gpusched
