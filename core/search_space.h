#pragma once
// The search space of Anderson et al. 2021 sec. 4: the children of a search
// state for one decision step, with the pruning of sec. 4.6.
//
// Steps: for each Func in DAG order (outputs first), step 0 chooses its
// compute location (root / a consumer kernel's block level = shared memory /
// a consumer's thread level = registers / inline) and, at block level, its
// serial tiling; steps 1..S tile stage k-1 of a root Func (serial, then
// thread sizes; the rest is blocks) and pass other Funcs through unchanged,
// so every state in a beam has made the same number of steps.
//
// Invariant: every returned child is legal for Halide (compute_at targets
// contain all uses, at most 3 thread loops, splits no larger than extents)
// and within the hard limits of the GpuProfile.

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "common/gpu_profile.h"
#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched {

// Limits used for pruning. Sources: paper sec. 4.6 names the criteria, the
// numbers are ours (see the comment at each).
struct PruningLimits {
    double max_recompute = 10;         // points computed / minimum points, per Func
    int64_t max_unrolled_serial = 64;  // product of a stage's inner serial extents
    int64_t max_register_bytes = 512;  // a Thread-level allocation, per thread
    double min_lane_utilization = 0.5; // soft: active lanes / lanes of active warps
    double min_blocks_per_sm = 1.0;    // soft: blocks / SMs of a kernel
};

struct StepId {
    int node = 0;
    int phase = 0; // 0: location; k >= 1: tile stage k-1 of a root Func
};

struct EnumerationStats {
    int64_t enumerated = 0;
    int64_t pruned_hard = 0;
    int64_t pruned_soft = 0;
};

// Number of steps of the whole search.
int num_steps(const FunctionDAG &dag);
StepId step_at(const FunctionDAG &dag, int step);

Decisions initial_decisions(const FunctionDAG &dag);

// The kernel Func n runs in: the Root Func at the end of its hosts, or -1
// (inlined, unscheduled, or hosts that do not end at root).
int kernel_of(const Decisions &d, int n);
// Consumers of n with inlined ones replaced by their own (effective)
// consumers, into out. Returns false if some consumer is still unscheduled.
bool effective_consumers(const FunctionDAG &dag, const Decisions &d, int n, std::set<int> &out);

// The step's candidates before pruning (cheap: builds at most one loop nest).
// root_or_inline_only: the freezing pre-pass (sec. 3.2) offers a Func only
// its own kernel or inlining.
std::vector<Decisions> enumerate_candidates(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                            const GpuProfile &gpu, bool root_or_inline_only = false);
// Where enumerate_options gets the loop nests it judges a Func's placements
// by: the parent's, with one Func's decision replaced. The search hands in
// its scratch nest, rebuilt in place; without one, each is built afresh.
class LoopNest;
class ParentNests {
public:
    virtual ~ParentNests() = default;
    // The parent's nest with Func n's decision f (valid until the next call).
    virtual const LoopNest &with(int n, const FuncDecision &f) = 0;
};

// The same candidates as the step Func's new decision only (every candidate
// differs from the parent in that Func alone): no copy of the whole state.
// memo: the search's region memo for the nests built here (may be null);
// nests: the parent's nests (null: built here, with memo). offer_layouts:
// at the location step, each Block option is offered again with each
// dimension its readers walk stored innermost (core/storage_layout.h; a
// Root Func's layouts come with its last tiling step, in the beam search).
// offer_padding (with offer_layouts): each such Block option also padded
// against bank conflicts (FuncDecision::pad_shared).
class RegionMemo;
std::vector<FuncDecision> enumerate_options(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                            const GpuProfile &gpu, bool root_or_inline_only = false,
                                            RegionMemo *memo = nullptr, ParentNests *nests = nullptr,
                                            bool offer_layouts = false, bool offer_padding = false);

// At a root Func's tiling step (is_root_tiling_step), the candidates
// enumerate_options offers, in its order, without a decision per candidate:
// the serial and thread sizes of the stage's tileable loops (the first three
// pure or atomic ones), which option i writes into the stage's tiling and
// leaves its other loops as they were. They depend only on the stage and
// its Func's region, not on the state, so a search computes them once per
// stage (core/beam_expansion.cpp).
struct RootTilingOptions {
    std::vector<int> loops;              // the tileable loops' indices
    std::vector<int64_t> serial, thread; // option i's sizes: [i * loops.size() + q]
    size_t count = 0;                    // 1 (the parent unchanged) where no loop is tileable
    size_t size() const { return count; }
    void apply(size_t i, StageTiling &t) const;
};
RootTilingOptions root_tiling_options(const FunctionDAG &dag, int n, int si, const GpuProfile &gpu);
// Whether the step tiles a stage of a Func the parent computes at root with
// root_tiling_options (all of them but the update that combines a split's
// partials in block, which has options of its own).
bool is_root_tiling_step(const FunctionDAG &dag, const Decisions &parent, StepId step);

// Pruning verdict for one candidate: Hard = violates a hard limit; Soft =
// fails a soft criterion (kept only when no sibling passes).
enum class Verdict { Ok, Soft, Hard };
Verdict classify_candidate(const FunctionDAG &dag, const Decisions &d, StepId step, const GpuProfile &gpu,
                           const PruningLimits &limits);
// The same verdict from an already built loop nest of the candidate (the
// search featurizes that nest afterwards instead of building it twice).
Verdict classify_candidate(const LoopNest &nest, StepId step, const GpuProfile &gpu,
                           const PruningLimits &limits);
// True when the step cannot change this state (a pass-through step: the Func
// is not a kernel of its own, so it has no tiling step of its own).
bool is_pass_through(const Decisions &d, StepId step);

// The soft criteria on one stage's launch: a root stage's kernel launches at
// least min_blocks_per_sm blocks per SM, and every stage's threads fill
// min_lane_utilization of the warps they occupy.
bool launch_meets_soft(bool root, int64_t num_blocks, int64_t threads, const GpuProfile &gpu,
                       const PruningLimits &limits);

// At a root Func's tiling step, a candidate's soft verdict without its loop
// nest: the judged stage's launch depends only on its loops over the Func's
// region (FunctionDAG::loop_bounds of Node::region) and its tiling
// (core/root_stage_launch.h). False exactly when the candidate fails the
// soft criteria there: classify_candidate then answers Soft, or Hard where it
// also breaks a hard limit, which this does not check. The scratch keeps
// the per-loop vectors' storage between calls.
struct RootTilingScratch {
    std::vector<int64_t> serial, thread, block;
    std::vector<int> slot;
    std::array<int64_t, 3> shape{1, 1, 1};
};
bool root_tiling_meets_soft(const Stage &st, const std::vector<Span> &loops, const StageTiling *tiling,
                            const GpuProfile &gpu, const PruningLimits &limits, RootTilingScratch &scratch);

// Candidates with pruning applied (soft criteria relative to all siblings).
std::vector<Decisions> enumerate_children(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                          const GpuProfile &gpu, const PruningLimits &limits,
                                          EnumerationStats *stats = nullptr);

// Why a complete or partial state violates a hard limit (empty if none).
std::string hard_limit_violation(const FunctionDAG &dag, const Decisions &d, const GpuProfile &gpu,
                                 const PruningLimits &limits);

// Structural hash of a state: depth 0 sees which Funcs are kernels, 1 adds
// block-level fusion, 2 thread-level fusion and inlining, 3 which loops are
// split into thread and serial loops at all (sizes > 1, the coarse bit of
// Adams et al. 2019's hash), 4 and 5 the exact thread sizes (hence blocks),
// 6+ the exact serial sizes: outer levels of the loop nest first, as Adams
// et al. descend the tree, so even the fifth pass samples serial sizes.
// It is a sum of per-Func terms, so a candidate's hash is its parent's with
// one term replaced (func_structural_hash).
uint64_t structural_hash(const Decisions &d, int depth);
uint64_t func_structural_hash(int node, const FuncDecision &f, int depth);
// What that hash reads of a stage's tiling at `depth`: nothing below depth
// 3, then of each thread size whether it exceeds 1 (from depth 4 the size
// itself), and of each serial size likewise (from depth 6). Also what
// groups a root tiling step's options into sampling buckets
// (core/sampling_buckets.h), which must agree with the hash.
inline bool structural_hash_reads_tiling(int depth) {
    return depth >= 3;
}
inline int64_t structural_thread_key(int64_t size, int depth) {
    return depth >= 4 ? size : static_cast<int64_t>(size > 1);
}
inline int64_t structural_serial_key(int64_t size, int depth) {
    return depth >= 6 ? size : static_cast<int64_t>(size > 1);
}

} // namespace gpusched
