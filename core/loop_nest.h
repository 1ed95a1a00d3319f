#pragma once
// The loop nest of a (partially) scheduled pipeline, derived from the search's
// Decisions: a tree root -> block loops -> thread loops -> serial loops, each
// level a tiling of one stage. Root Funcs are kernels (block node under the
// root); Funcs fused at a kernel's block level are thread+serial nodes under
// that block node and are stored in shared memory; Funcs fused at a
// consumer's thread level are serial nodes under that consumer's thread node
// and are stored in registers. Inlined Funcs have no node; unscheduled Funcs
// are treated as stored at root (global memory) by their consumers.
//
// Bounds are concrete (from the estimates) and taken at a representative
// block and thread: the middle block of each kernel and the middle thread of
// a block, where the tile lies away from image borders.
//
// Invariants: every LoopNode's children are in realization order (producers
// before consumers); stage_at[node][stage] indexes `stages` for every
// scheduled, non-inlined stage and is -1 otherwise; extents are >= 1.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/effective_access.h"
#include "core/function_dag.h"
#include "core/region_memo.h"
#include "core/schedule_decisions.h"
#include "core/shift_shape.h"
#include "core/words_hash.h"

namespace gpusched {

// Whether a Func computed below root (Block or Thread level) has a region
// that may change extent as its kernel's tile moves (reads through rounding
// divisions, or reads that move differently), or that spans an RVar sized by
// parameters (an extent known only at run time): the nest then sizes it by
// the largest extent over kResidues consecutive tile starts, at the
// estimates, and schedule_apply fixes that extent in Halide
// (Func::bound_extent), so kernels launch constant threads and shared memory.
inline bool sized_by_max(const Node &n) {
    return n.footprint_rounds || n.reads_vary_with_tile || n.region_spans_sized_rvar;
}
// Tile starts tried: 2^5, a full period of five nested halvings.
constexpr int64_t kResidues = 32;

enum class LoopKind { Root, Block, Thread, Serial };
enum class MemoryLevel { Global, Shared, Register };

struct LoopNode {
    LoopKind kind = LoopKind::Root;
    int node = -1, stage = -1;   // the stage this level tiles (-1 for root)
    std::vector<int64_t> extent; // per loop of that stage
    int parent = -1;
    std::vector<int> children;
    std::vector<int> stored; // Funcs allocated at this level
};

// One scheduled stage and its bounds.
struct ScheduledStage {
    int node = -1, stage = -1;
    ComputeLocation location = ComputeLocation::Root;
    int kernel = -1; // index into LoopNest::kernels
    // Per loop of the stage:
    std::vector<int64_t> serial, thread, block;
    std::vector<Span> loops_realization; // one realization (root: all of it)
    std::vector<Span> loops_block;       // what one block of the kernel runs
    std::vector<Span> loops_thread;      // what one thread runs
    int64_t num_realizations = 1;
    int64_t threads = 1;                          // threads per block running this stage
    std::array<int64_t, 3> thread_shape{1, 1, 1}; // per gpu thread slot
    std::vector<int> thread_slot;                 // per loop: 0..2, or -1 (not a thread loop)
};

struct Kernel {
    int node = -1; // the root Func (its stage `stage`)
    int stage = 0;
    int64_t num_blocks = 1;
    std::array<int64_t, 3> block_shape{1, 1, 1}; // max over the stages in the block
    int64_t threads_per_block = 1;
    int64_t shared_bytes = 0;
    // The widest element among the Funcs at its Block level (shared
    // memory); 0 when it has none. See shared_storage_alignment.
    int widest_shared_element = 0;
    std::vector<int> stages; // indices into LoopNest::stages
};

// Halide packs a kernel's shared allocations whose lifetimes do not overlap
// into groups and sizes a group in units of its widest element, converting
// a narrower allocation's size by a division that rounds down
// (FuseGPUThreadLoops, AllocGroup::insert; the same in Halide 14, 19 and
// 21). A uint8 Func of 101 x 41 = 4141 bytes grouped with an int32 Func
// becomes 1035 ints = 4140 bytes, and the next group, live at the same
// time, starts on its last byte (random pipeline seed 1195: one pixel off on
// POCL, a race on a GPU). So a Block-level Func narrower than the kernel's
// widest stores its innermost dimension padded to a multiple of this many
// elements (align_storage; the region computed is unchanged), which makes
// its size in bytes a multiple of the widest element's. 1: no padding.
inline int shared_storage_alignment(const Node &n, int widest_shared_element) {
    return n.min_element_bytes > 0 && widest_shared_element > n.min_element_bytes
               ? widest_shared_element / n.min_element_bytes
               : 1;
}
// The extent a Func at a kernel's Block level stores its dimension 0 with:
// the region's `extent` rounded up to the alignment, or, padded against bank
// conflicts (FuncDecision::pad_shared), the first multiple of the alignment
// past it.
int64_t stored_extent(int64_t extent, int alignment, bool padded);
// The points a Func at a kernel's Block level stores for `region`: its
// dimension 0 at its stored extent.
int64_t padded_region_points(const Region &region, int alignment, bool padded = false);

// Which of the kResidues tile starts a Func sized by its largest extent is
// walked at: those its region's shape as the tile moves leaves necessary
// (core/shift_shape.h: one period where the extent repeats, the first and
// last where it is convex), or every one (which tests compare it with).
enum class TileStarts { WhereShapeAllows, Every };

class LoopNest {
public:
    // memo (optional, shared by the nests of one search) remembers the
    // regions of Funcs below root and what stages read across builds
    // (core/region_memo.h); demand() reads it too, so it must outlive the nest.
    LoopNest(const FunctionDAG &dag, const Decisions &d, RegionMemo *memo = nullptr,
             TileStarts tile_starts = TileStarts::WhereShapeAllows);
    // Recomputes the nest from the (changed) decisions it refers to, reusing
    // the storage of the previous build: the search checks and featurizes
    // its candidates in one scratch nest, so building a nest per candidate
    // allocates next to nothing (allocation was ~40% of the search's time).
    void rebuild();
    // The same as rebuild() where the decisions differ from the last
    // build's only in root Func n's tiling of stage si, as they do between
    // the candidates of one parent at a root tiling step (most of the states
    // a search costs): only that stage's kernel and loops are tiled again.
    // Any other change must take rebuild(). Falls back to it where the
    // kernel holds more than that stage; whether it retiled in place.
    bool retile_root_stage(int n, int si);
    // rebuild(), keeping what it built before Func n (every Func after n
    // unscheduled) as the base of rebuild_adding(n).
    void rebuild_keeping_base(int n);
    // The same as rebuild() where the decisions differ from the base's only
    // in Func n, which they (like every Func after it) leave unscheduled:
    // the candidates of a location step, after the first (most of the nests
    // a search builds outside root tiling steps). Steps run consumers first,
    // and what a Func before n is built from (its decision, its consumers'
    // regions, what they read through inlined Funcs, all before n) never
    // reaches n, so the base's stages and kernels stand and only n's are
    // added. Falls back to rebuild() where the decisions are not such;
    // whether it added.
    bool rebuild_adding(int n);

    const FunctionDAG &dag;
    const Decisions &decisions;
    // The loop tree (loops()[0] is the root: Block, Thread and Serial levels
    // of each kernel, the Funcs stored at each), made from the stages when
    // first asked for after a build. The search reads the stages and
    // kernels only: making the tree for every candidate it built was 4-5%
    // of a small deep pipeline's search.
    const std::vector<LoopNode> &loops() const;
    std::vector<ScheduledStage> stages;
    std::vector<Kernel> kernels;
    std::vector<std::vector<int>> stage_at; // [node][stage] -> index into stages or -1
    std::vector<Region> realization_region; // per node: one realization (allocation)
    std::vector<Region> block_region;       // per node: what one block of its kernel touches
    std::vector<int64_t> realizations;      // per node
    // Walks at tile starts the regions' shapes made unnecessary, over every
    // build of this nest.
    int64_t shift_walks_saved = 0;

    ComputeLocation location(int node) const;
    // Where a producer's data lives (images, root and unscheduled: global).
    MemoryLevel memory_level(const ProducerRef &p) const;
    // Allocation shape of a producer (for strides and allocation bytes).
    const Region &allocation(const ProducerRef &p) const;
    // The dimension a producer stores innermost (FuncDecision::
    // storage_innermost): images and Funcs in registers or unscheduled, 0.
    int storage_innermost(const ProducerRef &p) const;
    // The elements a producer stores its innermost dimension with beyond its
    // allocation's extent: a Block-level Func padded against bank conflicts
    // (FuncDecision::pad_shared), else 0 (the packing alignment of narrow
    // shared Funcs is not counted in strides).
    int64_t storage_padding(const ProducerRef &p) const;

    // Regions of non-inlined producers a stage needs over the given loop
    // bounds, following inlined Funcs through to what they read. Shared with
    // the region memo where it has them (asked three times per stage
    // featurized, a copy each was a map of vectors).
    std::shared_ptr<const std::map<ProducerRef, Region>> demand(const Stage &s,
                                                                const std::vector<Span> &loops) const;
    // The same, always walked (demand() takes it from the memo where it can).
    std::map<ProducerRef, Region> demand_walk(const Stage &s, const std::vector<Span> &loops) const;
    // The loads the stage issues after inlining (collect_accesses), from the
    // region memo where the nest has one: they depend on the stage and on
    // which of its producers are inlined, and featurization asks for them
    // for every stage it computes.
    std::shared_ptr<const EffectiveAccesses> accesses(const Stage &s) const;
    // Region of the stage's own Func written over the given loop bounds.
    Region written(const Stage &s, const std::vector<Span> &loops) const;
    // Sets k's widest_shared_element and its shared_bytes: the Funcs at its
    // Block level, each padded as shared_storage_alignment says.
    void count_shared_memory(Kernel &k) const;

private:
    // The memo key of region n (at block or per-thread level) in `kernel`:
    // everything that region is computed from (the kernel's root, n's host,
    // which Funcs above n are inlined, and the decisions of the Funcs above
    // n in the kernel). Funcs above n must already be built.
    void below_root_key(int n, int kernel, bool per_thread, std::vector<int64_t> &key) const;
    // Appends which of Funcs from..to-1 are inlined, 64 to a word (every
    // word of the pipeline, the other Funcs' bits clear): part of every memo
    // key whose result is read through inlined Funcs. A region below root
    // takes its consumers' range [0, n); what a stage of node n reads, its
    // producers' and its own, [n, Funcs). From the last build's decisions,
    // like everything else in the nest.
    void append_inlined_bits(int from, int to, std::vector<int64_t> &key) const;
    // Tiles root Func n's stage si as its decision says: ss (whose
    // loops_realization is set) and its kernel k, and n's block region.
    void tile_root(int n, int si, ScheduledStage &ss, Kernel &k);
    // rebuild() in three parts: the build's state cleared; the stages,
    // regions and kernels of Funcs first .. last - 1 (every Func before
    // `first` already built); the kernels' totals and the loop tree.
    void begin_build();
    void build_funcs(size_t first, size_t last);
    void end_build();
    // The regions of one build's Funcs below root (core/below_root_regions.h).
    class BelowRootRegions;
    // build_funcs per location: Func n's stages, regions and (root) kernels.
    void build_root_func(int n);
    void build_block_func(int n, BelowRootRegions &regions);
    void build_thread_func(int n, BelowRootRegions &regions);
    // The stage set-up every location shares: stage si of Func n in
    // `kernel`, over one realization of `realization`, untiled (every loop
    // serial 1, thread 1, block 1); add_stage appends it to its kernel.
    ScheduledStage new_stage(int n, int si, int kernel, const Region &realization);
    void add_stage(ScheduledStage &&ss);

    RegionMemo *memo_;
    TileStarts tile_starts_;
    // The shifts the shapes of regions as the tile moves leave to walk
    // (BelowRootRegions::shift_verdict), by what a shape is made from.
    std::unordered_map<std::vector<int64_t>, ShiftWalks, WordsHash> shift_verdicts_;
    size_t shift_verdict_bytes_ = 0;
    static constexpr size_t kMaxShiftVerdictBytes = size_t(4) << 20; // emptied past it
    std::vector<int64_t> verdict_key_;
    mutable std::vector<int64_t> access_key_, demand_key_; // reused by accesses() and demand()
    std::vector<int64_t> key_, shift_key_;
    std::vector<uint64_t> inlined_words_; // bit c % 64 of word c / 64: Func c is inlined
    // Per side (block, thread) and Func: below_root_key of its shifted
    // regions in this build, and whether it is made yet.
    std::vector<std::vector<int64_t>> shift_base_[2];
    std::vector<uint8_t> shift_base_done_[2];
    // Parts of earlier builds kept for their vectors' capacity.
    std::vector<ScheduledStage> spare_stages_;
    mutable std::vector<LoopNode> loops_, spare_loops_;
    mutable bool loops_made_ = false; // loops_ is the last build's tree
    void make_loop_tree() const;
    std::vector<Kernel> spare_kernels_;
    std::vector<int> kernel_of_node_;
    mutable std::vector<int> thread_node_of_stage_, kernel_block_node_; // make_loop_tree's
    // The base of rebuild_adding: the decisions (Func `node` unscheduled),
    // how many stages and kernels the Funcs before `node` made, and each of
    // those kernels' block shape and stage count; `current` while the last
    // build is the base with `node` added.
    struct Base {
        int node = -1; // none yet
        bool current = false;
        Decisions decisions;
        size_t stages = 0;
        struct KernelPart {
            std::array<int64_t, 3> block_shape;
            size_t stages;
        };
        std::vector<KernelPart> kernels;
    } base_;
    // Per Func boundary i <= base_.node of the last rebuild_keeping_base
    // build: how many stages and kernels the Funcs before i made, and where
    // each of those kernels' parts at i start in checkpoint_parts_. A build
    // depends on the Funcs before i only through their decisions (see
    // rebuild_adding), so the next parent's build at the same step keeps
    // what the Funcs it shares with the last one made (take_back_to) and
    // builds from the first Func that differs: consecutive parents in a beam
    // mostly differ in their last few Funcs.
    struct Checkpoint {
        size_t stages, kernels, parts;
    };
    std::vector<Checkpoint> checkpoints_;
    std::vector<Base::KernelPart> checkpoint_parts_;
    int64_t record_until_ = -1;        // build_funcs records checkpoints at Funcs up to this
    bool checkpoints_current_ = false; // they are of the last build (with base_.decisions)
    void record_checkpoint(size_t ni);
    void take_back_to(size_t m);
    // Takes the build back to `n_stages` stages and `n_kernels` kernels,
    // each kernel's block shape and stage count from `parts`, and nothing
    // built of Funcs first..last-1 (their inlined bits from the decisions).
    void take_back(size_t n_stages, const Base::KernelPart *parts, size_t n_kernels, size_t first,
                   size_t last);
};

} // namespace gpusched
