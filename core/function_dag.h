#pragma once
// The function DAG: the algorithm being scheduled, as the search sees it.
// Nodes are the Funcs reachable from the pipeline's outputs, ordered
// consumers-first (node 0 is an output; every node's consumers have smaller
// indices), which is the order in which the search makes decisions. Each
// node holds its stages (pure definition, then updates), each stage its loop
// dimensions (innermost first, as Halide orders them), its call sites, and
// one Edge per producer with the symbolic box of the producer required per
// box of the stage's loop variables (from Halide's bounds machinery).
//
// Invariants: nodes[i].region is the region Halide would compute if the Func
// were compute_root (outputs: their estimates), evaluated with the
// parameters' estimates; every Edge's box has one (min, max) per producer
// dimension expressed in the variables loop_min_name()/loop_max_name() of
// the stage's loops and in parameters whose estimates are in param_values;
// where such a bound cannot be evaluated (a data-dependent index Halide
// bounds only symbolically or not at all), the producer's own Func estimate
// stands in for that dimension (Edge::estimated), and the DAG refuses the
// pipeline, naming the Func and dimension, when there is none; all regions
// are non-empty.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Halide.h>

#include "common/errors.h"
#include "core/expr_eval.h"
#include "costmodel/pipeline_features.h"

namespace gpusched {

struct Span {
    int64_t min = 0, max = -1;
    int64_t extent() const { return max - min + 1; }
    bool operator==(const Span &o) const { return min == o.min && max == o.max; }
};
using Region = std::vector<Span>;

// One loop of a stage.
struct LoopDim {
    std::string var; // Halide's name of the Var / RVar (see unqualified_var_name)
    bool is_rvar = false;
    int func_arg = -1;                     // pure loops: which argument of the Func it iterates
    int64_t rvar_min = 0, rvar_extent = 1; // RVars: the estimated domain
    // RVars: the extent depends on parameters or buffer sizes (a whole row:
    // RDom(0, in.width())), so the real one is not rvar_extent at other sizes.
    bool rvar_sized_by_params = false;
};

// A split RVar of a rfactor intermediate is named after the RVar it came
// from ("r$y.r$y_o"); Halide's scheduling calls take the last part.
inline std::string unqualified_var_name(const std::string &name) {
    return name.substr(name.rfind('.') + 1);
}

// A producer reference: a Func of the DAG or an input image.
struct ProducerRef {
    int index = -1;
    bool is_image = false;
    bool operator==(const ProducerRef &o) const { return index == o.index && is_image == o.is_image; }
    bool operator<(const ProducerRef &o) const {
        return is_image != o.is_image ? !is_image : index < o.index;
    }
};

// Change of each index argument (rows) per unit step of each loop of a
// stage (columns); nullopt where it is data dependent or not evaluable.
using Jacobian = std::vector<std::vector<std::optional<int64_t>>>;

// One call site (a load) in a stage's definition.
struct Access {
    ProducerRef producer;
    bool is_self = false; // an update stage reading its own Func
    int bytes = 4;        // bytes of the loaded element
    // jacobian[arg][loop]: change of the call's argument per unit step of the
    // stage's loop (nullopt: data dependent or otherwise not evaluable).
    Jacobian jacobian;
    // offset[arg]: the argument minus its own loop variable at an interior
    // point (0 for f(x, y) read as g(x, y)); nullopt if not evaluable.
    std::vector<std::optional<int64_t>> offset;
};

// The stage -> producer relation: the box of the producer required.
struct Edge {
    ProducerRef producer;
    std::vector<std::pair<Halide::Expr, Halide::Expr>> box; // per producer dimension
    // box compiled with the stage's loop bounds as slots (loop i's min is
    // slot 2i, its max 2i+1) and parameter estimates as constants: what
    // FunctionDAG::required evaluates.
    std::vector<std::pair<CompiledExpr, CompiledExpr>> compiled_box;
    bool affine = true; // every bound is affine in the loop bounds (see is_affine_bound)
    // Every compiled bound is integer-linear in the slots, or integer
    // arithmetic on them (integer_box): how the region moves with the tile
    // can be followed (core/shift_shape.h).
    bool shift_traceable = false;
    // Per producer dimension, each bound as integer arithmetic on the slots
    // where it is such arithmetic but not linear (CompiledExpr::integer_form;
    // empty otherwise): rounding divisions and clamps, whose movement with
    // the tile core/shift_shape.h follows too.
    std::vector<std::pair<std::vector<CompiledExpr::IntegerNode>, std::vector<CompiledExpr::IntegerNode>>>
        integer_box;
    // Some bound divides (or takes a remainder): x / 2 over [a, b] is
    // [a / 2, b / 2], whose extent depends on where the interval starts.
    bool rounds = false;
    // Whether Halide 14 can bound this footprint wherever the producer is
    // computed below root: for every subset of the stage's pure loops that
    // iterate inside the producer's compute level (the other pure loops are
    // then fixed outer loops, free symbols to Halide; RVars always iterate),
    // Halide's bounds of the simplified definition, the form its allocation
    // bounds inference sees, are finite in every dimension. Not implied by
    // `affine`, which is judged on the unsimplified definition with every
    // loop an interval: the simplifier turns `1 << k` (k >= 0) into
    // shift_left(1, uint32(k)), which Halide 14 bounds as [0, +inf) unless
    // k is a single point, and k = select(t < 16, 0, 1) + ... with t a
    // fixed outer loop bounds to [0, 5], not a point (max_filter). A Func
    // read through an inlined one is judged on the inlined Func's own
    // definition, not on the composition Halide lowers (an approximation).
    // Images: always true.
    bool bounded_below_root = true;
    int num_calls = 0;
    // Per producer dimension, empty if none: the producer's Func estimate,
    // where the bound above cannot be evaluated (required() uses it in
    // place of the bound). Such an edge is not bounded_below_root: Halide
    // sizes that region from the parameters' run-time values, which is
    // fine at root but not a constant size inside a kernel.
    std::vector<std::optional<Span>> estimated;
    // Some dimension of box is undefined: Halide itself cannot bound the
    // read (an unclamped data-dependent index), so the producer cannot be
    // computed at any level and must be inlined (Node::always_inline).
    bool unbounded_in_halide = false;
    bool from_estimate() const {
        for (const auto &s : estimated)
            if (s) return true;
        return false;
    }
};

struct Stage {
    int node = -1;
    int index = 0;              // 0 = pure definition, k = update k-1
    std::string name;           // "f" or "f.update(k-1)"
    std::vector<LoopDim> loops; // innermost first
    std::vector<Edge> edges;    // one per distinct producer (self excluded)
    // Update stages: the box of the stage's own Func it reads and writes
    // over its loops (producer: the Func itself), the way Halide grows a
    // Func's region by what its updates touch (a scan f(x, r) = f(x, r - 1)
    // touches the reduction domain's rows, whatever its consumers need);
    // compiled_box empty for pure definitions.
    Edge self_box;
    std::vector<Access> accesses;
    // Store jacobian: change of the stored coordinate per loop step (the
    // identity for pure definitions).
    Jacobian store_jacobian;
    PipelineFeatures features;
    int strahler = 1; // registers needed to evaluate the values (Strahler number)
    // An update Halide may run its RVars' iterations in parallel, with
    // atomic stores (Stage::atomic(); a reduction split's combining update,
    // core/reduction_split.h): its RVar loops are tiled like pure ones.
    bool atomic = false;
    int num_pure_loops() const;
    // Loop l may be split into blocks and threads: a pure var, or an RVar of
    // an atomic update.
    bool tileable(size_t l) const { return atomic || !loops[l].is_rvar; }
};

struct Node {
    std::string name;        // Halide's
    std::string stable_name; // as records and sources name it (core/stable_names.h)
    Halide::Internal::Function func;
    std::vector<std::string> args;
    int bytes_per_point = 0; // sum over tuple elements
    int max_element_bytes = 0;
    int min_element_bytes = 0; // the narrowest tuple element
    bool is_output = false;
    std::vector<Stage> stages;
    std::vector<int> consumers; // node indices, ascending, unique
    Region region;              // as if compute_root (outputs: estimates)
    // The Func's own estimate per dimension (set_estimate / set_estimates;
    // outputs also from their output buffer), if given.
    std::vector<std::optional<Span>> estimate;
    bool can_inline = false; // single pure stage, not an output
    // can_inline and every call site is pointwise, or some read of it is
    // unbounded in Halide (Edge::unbounded_in_halide)
    bool always_inline = false;
    // Every Edge into this Func (from any consumer stage, inlined ones
    // included) is bounded_below_root: only then may it be computed at a
    // Block or Thread level, or staged per thread, and still lower.
    bool bounded_below_root = true;
    // Every update stage writes the point of its own pure variables
    // (f(x, y) = f(x, y) + ..., not f(x, r) or f(x, g(x)) = ...). Otherwise
    // Halide sizes the Func's allocation by the union of its consumers'
    // region and the updates' stores, which is not a constant size below
    // root (bilateral_grid's histogram at a data-dependent z): GPU registers
    // need one, so a Func at Thread level must have this.
    bool updates_write_own_point = true;
    // updates_write_own_point, and every read of the Func by its own updates
    // is at a fixed offset from the point written along each pure loop and
    // does not move with any RVar (f(x, y) = f(x, y - 1) + ..., not a scan
    // reading f(x, r - 1) nor f(x, y) += f(x, r)). Otherwise the region an
    // update touches is the reduction domain's, which Halide unites with the
    // consumers' tile: not a constant size per block or per thread (issue 12,
    // a scan asked for 16 x 1024 threads), so the Func stays at root.
    bool updates_stay_in_tile = true;
    // Some Edge into this Func rounds (Edge::rounds), or some consumer's
    // region does: per block, its region may then change extent with the
    // tile's position through chains of rounding divisions (a pyramid's
    // upsampling levels), which the search checks at every residue of the
    // tile's position (tile_motion.cpp, extent_fixed_as_tile_moves).
    bool footprint_rounds = false;
    // Some path of reads into this Func (directly or through consumers that
    // may be inlined) reads it with more than one index pattern or with
    // dimensions mixed (a transpose, a scale). Only then can the region a
    // block or thread needs change extent as the tile moves, which the
    // search then checks (tile_motion.cpp, extent_fixed_as_tile_moves).
    bool reads_vary_with_tile = false;
    // Two of the paths of reads from this Func toward the outputs move its
    // region differently as a kernel's tile moves: it has two or more
    // consumers, and below one of them some read is not the plain "argument
    // i follows the reader's argument i" (a transpose, a scale, a fixed
    // coordinate). Below root, the union of those paths' regions can then
    // grow with the block's position even though each consumer reads it
    // with one pattern (seed 1500: a channel mix read by a stencil that a
    // transpose reads, and by a pointwise stage that is read plainly). The
    // search checks its extent as the tile moves (extent_fixed_as_tile_moves)
    // and keeps it out of the kernel where it changes; unlike
    // reads_vary_with_tile it is not sized by its maximum, as a region that
    // passes the check has one size.
    bool paths_move_apart = false;
    // Some consumer reads this Func over the whole domain of an RVar whose
    // extent depends on parameters or buffer shapes (a reduction split's
    // combining update over RDom(0, in.width() / 4) reads every partial).
    // Below root, Halide would size the region, hence a kernel's threads and
    // shared memory, at run time (random pipeline seed 1060); the schedule
    // fixes it to the estimated extent instead (loop_nest.h, sized_by_max).
    bool region_spans_sized_rvar = false;
    // A reduction split's level-0 intermediate whose partials the level-1
    // intermediate (this node index) combines in block (core/reduction_split.h,
    // in_block): the search computes it only at the Block level of that
    // Func's update. -1 otherwise. Set by mark_in_block_combining, not by
    // the constructor: a Function does not say which split made it.
    int combined_in_block_of = -1;
};

// A pipeline's buffers at their estimated shapes, with its scalar params:
// "in.min.0", "in.extent.0", "in.max.0" for every input and output buffer.
// What the launch check evaluates the kernels' assertions at.
struct EstimatedShapes {
    VarValues values;
    std::vector<std::string> outputs; // the output buffers' names
};

struct ImageInput {
    std::string name;
    int dims = 0;
    int bytes = 0;
    Region region; // union of what the pipeline reads
};

// What the FunctionDAGs of one autoscheduler call share. The reduction-split
// search builds a DAG for each split variant, a deep copy of the pipeline
// that differs from the others in a Func or two; which of a stage's
// footprints stay bounded below root (2^(pure loops) of Halide's bounds
// queries per stage, half of making a DAG) depends only on the stage's
// definition, its loops and the value bounds of the Funcs it calls, so it is
// found once per call, keyed by all of those printed. Per edge, by producer
// name: whether it is bounded below root.
struct DagBuildMemo {
    std::unordered_map<std::string, std::vector<std::pair<std::string, bool>>> bounded_below_root;
    int64_t hits = 0, misses = 0;
};

class FunctionDAG {
public:
    // Throws UserError naming the Func and dimension when an output lacks an
    // estimate or a region cannot be bounded. memo (optional): shared by the
    // DAGs of one call, over pipelines with the same parameter estimates.
    explicit FunctionDAG(const std::vector<Halide::Internal::Function> &outputs,
                         DagBuildMemo *memo = nullptr);

    std::vector<Node> nodes;
    std::vector<ImageInput> images;
    VarValues param_values; // estimates of scalar params and buffer shapes

    int node_index(const std::string &name) const; // -1 if none
    // By the name records and sources use (core/stable_names.h); -1 if none.
    int stable_node_index(const std::string &stable_name) const;
    // param_values, and every output buffer at its Func's estimated region
    // (the sizes the search planned for).
    EstimatedShapes estimated_shapes() const;
    int num_stages() const;                  // over all nodes
    int stage_id(int node, int stage) const; // dense id, nodes order
    const Stage &stage(int node, int stage_index) const { return nodes[node].stages[stage_index]; }

    // Loop bounds of a stage when its Func's region is func_region (as
    // loop_bounds_into, below).
    std::vector<Span> loop_bounds(const Stage &s, const Region &func_region) const;
    // Box of edge e's producer required when the stage runs over loops
    // (Edge::estimated in the dimensions it covers). nullopt if some other
    // bound cannot be evaluated.
    std::optional<Region> required(const Stage &s, const Edge &e, const std::vector<Span> &loops) const;
    // Grows region (of node's Func, as its consumers need it) by what the
    // Func's updates touch of it over their loops (Stage::self_box): the
    // region Halide computes and allocates when the Func is below root.
    void grow_by_updates(int node, Region &region) const;
    // As required(), falling back to the producer's whole region (documented
    // over-approximation for data-dependent accesses).
    Region required_or_all(const Stage &s, const Edge &e, const std::vector<Span> &loops) const;

    const Region &producer_region(const ProducerRef &p) const {
        return p.is_image ? images[p.index].region : nodes[p.index].region;
    }
    int producer_bytes(const ProducerRef &p) const {
        return p.is_image ? images[p.index].bytes : nodes[p.index].bytes_per_point;
    }
    std::string producer_name(const ProducerRef &p) const {
        return p.is_image ? images[p.index].name : nodes[p.index].name;
    }

    static std::string loop_min_name(const std::string &var) { return var + ".gs_lo"; }
    static std::string loop_max_name(const std::string &var) { return var + ".gs_hi"; }

private:
    // The constructor's steps that fill more than the nodes, in the order it
    // takes them (core/function_dag_build.cpp, where its other steps are
    // free functions over the nodes). Each fills what the next reads.
    //
    // Every parameter's estimate, into param_values.
    void collect_param_estimates(const std::map<std::string, Halide::Internal::Function> &env);
    // One node per Func, consumers first; returns each Func's node index.
    std::map<std::string, int> add_nodes(const std::vector<Halide::Internal::Function> &outputs,
                                         const std::map<std::string, Halide::Internal::Function> &env,
                                         const std::vector<std::string> &order);
    // Every node's stages with their loops, call sites and symbolic
    // footprints (one Edge per producer); the images they read.
    void add_stages(const std::map<std::string, int> &index_of,
                    const Halide::Internal::FuncValueBounds &value_bounds, DagBuildMemo *memo);
    void compile_footprints();
    // Every node's region, consumers first, with the footprints that need
    // them bounded again or estimated.
    void compute_regions(const Halide::Internal::FuncValueBounds &value_bounds);
    void number_stages(); // stage_offsets_

    // Compiles e.box into e.compiled_box, s's loop bounds as slots.
    void compile_box(const Stage &s, Edge &e) const;
    // Halide's bound of a footprint over the loops' symbolic bounds can be
    // one that required() cannot evaluate (float math: Halide 21 bounds
    // max_filter's column read at y + h(t) + 1 - (1 << lvl(t)) by an
    // expression in sqrt_f32 of t's bounds), or none where it cannot prove a
    // fact about symbolic bounds that it can about constant ones (Halide 21
    // bounds shift_left(1, k) only where it proves k < 32). Given t's range
    // it bounds the read exactly. For each such dimension of e, this asks
    // Halide again with loops at the constant range they take over the
    // stage's whole region (each loop alone first, so the bound still
    // follows the tile in the others; then all): a footprint that holds for
    // every tile. Where the bound was undefined, Halide cannot bound the read
    // wherever it computes the producer, and the edge becomes
    // unbounded_in_halide (the producer is inlined). Returns whether every
    // such dimension now evaluates.
    bool bound_with_whole_loops(const Stage &s, Edge &e, const std::vector<Span> &loops,
                                const Halide::Internal::FuncValueBounds &value_bounds);
    // Fills e.estimated for the dimensions whose bound cannot be evaluated
    // over loops, from the producer's Func estimates; throws UserError naming
    // the producer and the dimension where it has none.
    void use_estimates_where_unbounded(const Stage &s, Edge &e, const std::vector<Span> &loops) const;

    std::vector<int> stage_offsets_;
};

// Takes the Funcs in `pending` smallest index first, each with what has
// accumulated for it, and lets visit add more. Consumers have smaller indices
// than their producers, so when a Func is taken every contribution to it has
// arrived: a walk down chains of inlined Funcs visits each Func once, not once
// per path (paths are exponential in number in bgu's inlined solver).
template <typename T, typename Visit> void drain_in_dag_order(std::map<int, T> &pending, Visit &&visit) {
    while (!pending.empty()) {
        auto first = pending.begin();
        const int node = first->first;
        T value = std::move(first->second);
        pending.erase(first);
        visit(node, value);
    }
}

// Loop bounds of a stage when its Func's region is func_region, into out
// (FunctionDAG::loop_bounds without allocating when out has the capacity).
// Inline: the loop nest calls it for every stage of every state it builds.
inline void loop_bounds_into(const Stage &s, const Region &func_region, std::vector<Span> &out) {
    out.resize(s.loops.size());
    for (size_t i = 0; i < s.loops.size(); i++) {
        const LoopDim &l = s.loops[i];
        if (l.is_rvar)
            out[i] = Span{l.rvar_min, l.rvar_min + l.rvar_extent - 1};
        else
            out[i] = func_region[l.func_arg];
    }
}

// Accumulates b into a (union of boxes).
void merge_region(Region &a, const Region &b);
int64_t region_points(const Region &r);

} // namespace gpusched
