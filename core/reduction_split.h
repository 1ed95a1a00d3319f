#pragma once
// Reductions split across threads: the search decision the paper's space
// lacks (issue 27). A reduction whose pure output is too small to fill the
// GPU (a whole-image sum: one point; a row softmax: one point per row) runs
// its whole reduction domain serially in each of those few threads. Split,
// it becomes Halide's rfactor: an intermediate Func computes P partial
// results per output point in parallel (each over 1/P of the domain), and
// the original update then combines the P partials:
//
//   out() += in(r.x, r.y)          with P = 4096 partials along r.x becomes
//   out_intm(u) += in(r.x.o * 4096 + u, r.y)     (4096 parallel points)
//   out() += out_intm(r.x.i)                     (4096 serial steps)
//
// The partials are taken from the innermost RVar's inner part, so that
// neighbouring threads read neighbouring addresses (coalesced loads).
//
// Or the combining loop runs in parallel with atomic stores (atomic):
//
//   out_intm(u) += in(r.x.o * 262144 + u, r.y)   (262144 parallel points)
//   out() += out_intm(r.x.i)                     (262144 parallel atomic adds)
//
// which fills the GPU in both kernels at the price of contended stores to
// the few output points (costmodel/analytic_cost_model.cpp charges them).
//
// A reduction to very few points (a whole-image sum: one) needs far more
// partials to fill the GPU than one thread can then combine serially; its
// combining loop is split again (a second level):
//
//   out_intm(u) += in(...)                  (262144 parallel points)
//   out_intm2(w) += out_intm(r.o * 512 + w) (512 parallel points)
//   out() += out_intm2(r.i)                 (512 serial steps)
//
// or the second level combines consecutive partials inside a block
// (in_block): the classic two-step GPU reduction in one launch.
//
//   out_intm2(v) += out_intm(v * 256 + r.i) (1024 blocks; per block, the 256
//                                            partials it combines are computed
//                                            by 256 threads in shared memory)
//   out() += out_intm2(r.o)                 (1024 steps, serial or atomic)
//
// The search then has one place for out_intm: the Block level of
// out_intm2's update (Node::combined_in_block_of). Its threads fill the GPU
// (262144 in all) and the partials never leave the chip.
//
// A split changes the pipeline (a new Func), so it cannot be one more step
// of the beam search over one FunctionDAG: the plugin searches each variant
// of the pipeline (core/reduction_split_search.h) and keeps the cheapest.
// The chosen splits are part of the record (replayable) and of the emitted
// schedule source, which performs the same rfactor before scheduling.
//
// Invariant: apply_reduction_splits() and reduction_split_source() perform
// the same transformation; a split is only offered where Halide proved the
// update associative (rfactor refuses otherwise; reduction_split_options
// tries it on a copy).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <Halide.h>
#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"
#include "core/function_dag.h"
#include "core/search_defaults.h"

namespace gpusched {

// One preserved piece of the reduction domain: a whole RVar (factor 0), or
// the inner `factor` iterations of an RVar split into outer and inner.
// Or, with outer set, the outer part of an RVar split by `factor`: the
// inner `factor` iterations are reduced in the intermediate (in-block
// combining of a second level).
struct PreservedRVar {
    std::string rvar;
    int64_t factor = 0;
    bool outer = false;
    bool operator==(const PreservedRVar &o) const {
        return rvar == o.rvar && factor == o.factor && outer == o.outer;
    }
};

struct ReductionSplit {
    std::string func; // the Func whose update is split (its stable name)
    int update = 0;   // which update (stage update + 1)
    // 0: the update as written; 1: the combining loop a level-0 split of
    // the same update left.
    int level = 0;
    std::vector<PreservedRVar> preserved; // innermost first
    int64_t partials = 1;                 // partial results per output point
    // The combining update made atomic (Halide's Stage::atomic()): its loop
    // over the partials runs in parallel threads, each adding its partial
    // with an atomic store, instead of serially in one thread per output
    // point. Only a last level, and only for a single 32-bit value (CUDA and
    // OpenCL have no atomics for Tuples or narrower types).
    bool atomic = false;
    // A level-1 split whose intermediate combines consecutive partials of
    // the level-0 intermediate, which is then computed per block of its
    // update (shared memory): set where a preserved piece is an outer part.
    bool in_block() const {
        for (const PreservedRVar &p : preserved)
            if (p.outer) return true;
        return false;
    }
    bool operator==(const ReductionSplit &o) const {
        return func == o.func && update == o.update && level == o.level && preserved == o.preserved &&
               atomic == o.atomic;
    }
    // The intermediate Func rfactor creates, by its stable name
    // (core/stable_names.h): "out_intm", then "out_intm2".
    std::string intermediate() const {
        return func + "_intm" + (level == 0 ? "" : std::to_string(level + 1));
    }
};

// Partials a split may leave to one thread to combine serially. A level-0
// split with more partials is only useful with a level-1 split of its
// combining loop (the search tries them together).
inline constexpr int64_t kMaxSerialPartials = 8192;
inline constexpr int kMaxSplitLevels = 2;
// A level-0 split with at least this many partials is also tried with its
// combining loop split: one thread combining a thousand partials waits on a
// thousand loads one after another.
inline constexpr int64_t kSecondLevelFrom = 1024;
// Partials one block combines in shared memory (in_block): a few warps'
// worth up to a whole block of threads.
inline constexpr int64_t kInBlockPartials[] = {256, 1024};

// Whether a level-0 split into `partials` per output point is worth a
// second level that combines in block: only where its partials fill a
// quarter of the GPU or more, the point of combining in block being to keep
// them all in flight. Fewer leave each thread a long serial chain that no
// combining shortens, which the default weights do not see (they took 4096
// partials of 4096 terms for the whole-image sum, 1.5% of an H100, over
// 65,536 atomic ones).
inline bool worth_combining_in_block(int64_t partials, int64_t output_points, const GpuProfile &gpu) {
    return partials * output_points * 4 >= int64_t(gpu.sm_count) * gpu.max_threads_per_sm;
}

// One reduction the search may split, and the splits it may choose.
struct SplittableReduction {
    std::string func;
    int update = 0;
    int64_t output_points = 1;    // pure points of the update
    int64_t reduction_points = 1; // iterations of its reduction domain
    std::vector<ReductionSplit> options;
};

// The reductions of dag whose outputs leave the GPU mostly idle (fewer pure
// points than a quarter of gpu's resident threads) and whose domain has at
// least 64 iterations per point, each with up to 4 splits into P partials, P
// a power of two near 1/16, 1/4 and all of the most worth having (the threads
// missing, at most a quarter of the domain and the level's limit) and near
// the square root of the domain (as many partials as iterations each);
// at level 0, each also with an atomic combining update where Halide's GPU
// backends allow one (a single 32-bit value) and atomic_combining is set;
// at level 1, also in-block combining (in_block) where in_block_combining is
// set and the level-0 partials fill a quarter of the GPU.
// Only the first such update of a Func, and only splits Halide accepts
// (tried on a copy of the pipeline). `applied`: the
// splits dag's pipeline already has; a Func split there is offered the next
// level (its combining loop), up to kMaxSplitLevels, and the last level at
// most kMaxSerialPartials partials; their intermediates are offered none.
// `max_partial_bytes`: no option whose partials take more device memory
// than this (its partial count times the split Func's region in bytes: a
// 256 x 256 joint histogram of two 4096 x 4096 images in 4096 partials is a
// 1 GiB intermediate for a 256 KiB result, issue 57).
std::vector<SplittableReduction> reduction_split_options(const FunctionDAG &dag, const GpuProfile &gpu,
                                                         const std::vector<ReductionSplit> &applied = {},
                                                         bool atomic_combining = true,
                                                         bool in_block_combining = true,
                                                         int64_t max_partial_bytes = kDefaultMaxSplitBytes);

// Whether an update of f computes some float value: its sum depends on the
// order of the terms (an integer sum does not).
bool update_sums_floats(const Halide::Internal::Function &f, int update);

// A deep copy of the pipeline with the splits applied: the copy's outputs.
// The original Funcs are not touched.
std::vector<Halide::Internal::Function> split_copy(const std::vector<Halide::Internal::Function> &outputs,
                                                   const std::vector<ReductionSplit> &splits);

// Applies the splits, in order, to the pipeline of these outputs (its Funcs
// are changed). Throws UserError naming the Func where one is not a
// reduction of this pipeline; Halide's own error where it refuses one.
void apply_reduction_splits(const std::vector<Halide::Internal::Function> &outputs,
                            const std::vector<ReductionSplit> &splits);

// C++ that performs the same split in `apply_schedule_NAME`, declaring the
// intermediate as a Func named by intermediate_handle, given the Func's
// handle (a `::Halide::Func` already bound in that scope).
std::string reduction_split_source(const ReductionSplit &split, const std::string &func_handle,
                                   const std::string &intermediate_handle);

// Marks, in a DAG of a pipeline these splits were applied to, each level-0
// intermediate whose level-1 split combines in block: its only place is the
// Block level of the level-1 intermediate's update
// (Node::combined_in_block_of).
void mark_in_block_combining(FunctionDAG &dag, const std::vector<ReductionSplit> &splits);

nlohmann::json reduction_splits_to_json(const std::vector<ReductionSplit> &splits);
// Throws UserError on a malformed list.
std::vector<ReductionSplit> reduction_splits_from_json(const nlohmann::json &j);

} // namespace gpusched
