#include "core/search_space.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>

#include "core/loop_nest.h"
#include "core/root_stage_launch.h"
#include "core/storage_layout.h"
#include "core/tile_motion.h"

namespace gpusched {

int kernel_of(const Decisions &d, int c) {
    for (int guard = 0; guard < 64 && c >= 0; guard++) {
        const FuncDecision &f = d.funcs[c];
        if (f.location == ComputeLocation::Root) return c;
        if (f.location == ComputeLocation::Block || f.location == ComputeLocation::Thread)
            c = f.host;
        else
            return -1;
    }
    return -1;
}

bool effective_consumers(const FunctionDAG &dag, const Decisions &d, int n, std::set<int> &out) {
    for (int c : dag.nodes[n].consumers) {
        ComputeLocation l = d.funcs[c].location;
        if (l == ComputeLocation::Unscheduled) return false;
        if (l == ComputeLocation::Inline) {
            if (!effective_consumers(dag, d, c, out)) return false;
        } else {
            out.insert(c);
        }
    }
    return true;
}

namespace {

// Calls f(combo) for each choice of one value per list, in lexicographic
// order (the first list's value changing slowest), reusing one combo
// instead of materializing every combination: a root stage has thousands.
template <typename F>
void for_each_combination(const std::vector<std::vector<int64_t>> &options, std::vector<int64_t> &combo,
                          F &&f) {
    const size_t k = options.size();
    for (const auto &opts : options)
        if (opts.empty()) return;
    std::vector<size_t> at(k, 0);
    combo.resize(k);
    for (size_t q = 0; q < k; q++)
        combo[q] = options[q][0];
    while (true) {
        f(static_cast<const std::vector<int64_t> &>(combo));
        size_t q = k;
        while (q > 0) {
            q--;
            if (++at[q] < options[q].size()) {
                combo[q] = options[q][at[q]];
                break;
            }
            at[q] = 0;
            combo[q] = options[q][0];
            if (q == 0) return;
        }
        if (k == 0) return;
    }
}

// Serial sizes 1, 2, 4, 8, plus 3, 5, 7 when they make the remaining thread
// extent a multiple of the warp size (sec. 4.1).
std::vector<int64_t> serial_options(int64_t ext, int warp) {
    std::vector<int64_t> o;
    for (int64_t s : {1, 2, 4, 8})
        if (s <= ext) o.push_back(s);
    for (int64_t s : {3, 5, 7})
        if (s <= ext && ext % s == 0 && (ext / s) % warp == 0) o.push_back(s);
    std::sort(o.begin(), o.end());
    return o;
}

// The first three tileable loops of a stage (pure, or an atomic update's
// RVars) may be thread loops (Halide has 3 thread dimensions): f(index) for
// each, without a vector (check_hard runs it for every stage of every nest).
template <typename F> void for_each_tileable_loop(const Stage &st, F &&f) {
    for (size_t i = 0, found = 0; i < st.loops.size() && found < 3; i++) {
        if (!st.tileable(i)) continue;
        f(static_cast<int>(i));
        found++;
    }
}
// Their indices.
std::vector<int> tileable_loops(const Stage &st) {
    std::vector<int> r;
    for_each_tileable_loop(st, [&](int l) { r.push_back(l); });
    return r;
}

double inline_recompute(const FunctionDAG &dag, const Decisions &d, const LoopNest &nest, int n) {
    // Points of n evaluated when inlined: every call site in a consumer,
    // per point that consumer evaluates.
    std::function<double(int)> evaluated = [&](int f) -> double {
        double total = 0;
        for (int c : dag.nodes[f].consumers) {
            for (size_t si = 0; si < dag.nodes[c].stages.size(); si++) {
                const Stage &st = dag.nodes[c].stages[si];
                double calls = 0;
                for (const Access &a : st.accesses)
                    calls += (!a.producer.is_image && a.producer.index == f) ? 1 : 0;
                if (calls == 0) continue;
                double pts;
                if (d.funcs[c].location == ComputeLocation::Inline) {
                    pts = evaluated(c);
                } else {
                    int idx = nest.stage_at[c][si];
                    if (idx < 0) {
                        pts = static_cast<double>(region_points(dag.nodes[c].region));
                    } else {
                        const ScheduledStage &ss = nest.stages[idx];
                        pts = static_cast<double>(ss.num_realizations);
                        for (const Span &s : ss.loops_realization)
                            pts *= static_cast<double>(s.extent());
                    }
                }
                total += calls * pts;
            }
        }
        return total;
    };
    return evaluated(n) / static_cast<double>(std::max<int64_t>(1, region_points(dag.nodes[n].region)));
}

std::string check_hard(const FunctionDAG &dag, const Decisions &d, const LoopNest &nest,
                       const GpuProfile &gpu, const PruningLimits &limits, int focus) {
    for (const Kernel &k : nest.kernels) {
        if (k.threads_per_block > gpu.max_threads_per_block)
            return "kernel " + dag.nodes[k.node].name + " has " + std::to_string(k.threads_per_block) +
                   " threads per block";
        if (k.shared_bytes > gpu.shared_mem_per_block_bytes)
            return "kernel " + dag.nodes[k.node].name + " uses " + std::to_string(k.shared_bytes) +
                   " bytes of shared memory per block";
        // A scalar has no dimension to pad: narrower than the kernel's widest
        // shared Func, Halide's packing may overlap it with the next one
        // (core/loop_nest.h, shared_storage_alignment).
        for (int idx : k.stages) {
            const ScheduledStage &ss = nest.stages[idx];
            const Node &node = dag.nodes[ss.node];
            if (ss.location == ComputeLocation::Block && ss.stage == 0 && node.args.empty() &&
                shared_storage_alignment(node, k.widest_shared_element) > 1)
                return "kernel " + dag.nodes[k.node].name + " keeps the scalar " + node.name +
                       " in shared memory beside wider Funcs";
        }
    }
    for (const ScheduledStage &ss : nest.stages) {
        if (ss.location == ComputeLocation::Thread) continue;
        const Stage &st = dag.nodes[ss.node].stages[ss.stage];
        int64_t serial = 1;
        for_each_tileable_loop(st, [&](int l) { serial *= ss.serial[l]; });
        if (serial > limits.max_unrolled_serial)
            return st.name + " has serial extent " + std::to_string(serial);
    }
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const FuncDecision &f = d.funcs[n];
        if (f.location == ComputeLocation::Thread) {
            // Thread-level Funcs only read through affine footprints (checked
            // when enumerated), so their allocation size is static; it must
            // be small enough to live in registers.
            int64_t bytes = region_points(nest.realization_region[n]) * dag.nodes[n].bytes_per_point;
            if (bytes > limits.max_register_bytes)
                return dag.nodes[n].name + " needs " + std::to_string(bytes) +
                       " bytes of registers per thread";
        }
        if (static_cast<int>(n) != focus) continue;
        if (f.location == ComputeLocation::Block || f.location == ComputeLocation::Thread) {
            int idx = nest.stage_at[n][0];
            const ScheduledStage &ss = nest.stages[idx];
            double pts = static_cast<double>(ss.num_realizations);
            for (const Span &s : ss.loops_realization)
                pts *= static_cast<double>(s.extent());
            double minimum = static_cast<double>(region_points(dag.nodes[n].region));
            if (pts > limits.max_recompute * minimum) return dag.nodes[n].name + " recomputes too much";
        }
        if (f.location == ComputeLocation::Inline && !dag.nodes[n].always_inline) {
            if (inline_recompute(dag, d, nest, static_cast<int>(n)) > limits.max_recompute)
                return dag.nodes[n].name + " recomputes too much when inlined";
        }
    }
    return "";
}

// Soft criteria: only applied when some sibling meets them.
bool meets_soft(const FunctionDAG &dag, const LoopNest &nest, const GpuProfile &gpu,
                const PruningLimits &limits, StepId step) {
    for (const ScheduledStage &ss : nest.stages) {
        if (ss.node != step.node || ss.location == ComputeLocation::Thread) continue;
        // A root Func is only tiled in its later steps: judge its tiling then.
        if (ss.location == ComputeLocation::Root && (step.phase == 0 || ss.stage != step.phase - 1)) continue;
        if (!launch_meets_soft(ss.location == ComputeLocation::Root, nest.kernels[ss.kernel].num_blocks,
                               ss.threads, gpu, limits))
            return false;
    }
    return true;
}

} // namespace

bool launch_meets_soft(bool root, int64_t num_blocks, int64_t threads, const GpuProfile &gpu,
                       const PruningLimits &limits) {
    if (root && static_cast<double>(num_blocks) < limits.min_blocks_per_sm * gpu.sm_count) return false;
    const int64_t lanes = (threads + gpu.warp_size - 1) / gpu.warp_size * gpu.warp_size;
    return static_cast<double>(threads) >= limits.min_lane_utilization * static_cast<double>(lanes);
}

bool root_tiling_meets_soft(const Stage &st, const std::vector<Span> &loops, const StageTiling *tiling,
                            const GpuProfile &gpu, const PruningLimits &limits, RootTilingScratch &scratch) {
    const int64_t blocks = tile_root_stage(st, loops, tiling, scratch.serial, scratch.thread, scratch.block);
    const int64_t threads = assign_thread_slots(st, scratch.thread, scratch.slot, scratch.shape);
    return launch_meets_soft(true, blocks, threads, gpu, limits);
}

int num_steps(const FunctionDAG &dag) {
    int n = 0;
    for (const Node &node : dag.nodes)
        n += 1 + static_cast<int>(node.stages.size());
    return n;
}

StepId step_at(const FunctionDAG &dag, int step) {
    for (size_t i = 0; i < dag.nodes.size(); i++) {
        int k = 1 + static_cast<int>(dag.nodes[i].stages.size());
        if (step < k) return StepId{static_cast<int>(i), step};
        step -= k;
    }
    return StepId{static_cast<int>(dag.nodes.size()), 0};
}

Decisions initial_decisions(const FunctionDAG &dag) {
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    return d;
}

std::string hard_limit_violation(const FunctionDAG &dag, const Decisions &d, const GpuProfile &gpu,
                                 const PruningLimits &limits) {
    LoopNest nest(dag, d);
    return check_hard(dag, d, nest, gpu, limits, -1);
}

std::vector<Decisions> enumerate_candidates(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                            const GpuProfile &gpu, bool root_or_inline_only) {
    std::vector<Decisions> out;
    for (FuncDecision &f : enumerate_options(dag, parent, step, gpu, root_or_inline_only)) {
        out.push_back(parent);
        out.back().funcs[step.node] = std::move(f);
    }
    return out;
}

namespace {

// Each serial tiling of the pure loops of n, which `nest` places at a
// kernel's Block level (its decision's tilings all 1), the rest of each
// loop's extent in threads.
void add_block_tilings(const LoopNest &nest, int n, const GpuProfile &gpu, std::vector<FuncDecision> &out) {
    const ScheduledStage &ss = nest.stages[nest.stage_at[n][0]];
    std::vector<std::vector<int64_t>> opts;
    const std::vector<int> tl = tileable_loops(nest.dag.nodes[n].stages[0]);
    for (int l : tl)
        opts.push_back(serial_options(ss.loops_realization[l].extent(), gpu.warp_size));
    std::vector<int64_t> combo;
    for_each_combination(opts, combo, [&](const std::vector<int64_t> &serial) {
        FuncDecision c = nest.decisions.funcs[n];
        for (size_t q = 0; q < tl.size(); q++)
            c.stages[0].serial[tl[q]] = serial[q];
        out.push_back(std::move(c));
    });
}

// Whether a split's partials may go to the Block level of the update that
// combines them (Node::combined_in_block_of): only that Func reads them, and
// it is at root.
bool partials_fit_in_block(const FunctionDAG &dag, const Decisions &parent, int n) {
    const int host = dag.nodes[n].combined_in_block_of;
    std::set<int> eff;
    return effective_consumers(dag, parent, n, eff) && eff == std::set<int>{host} &&
           parent.funcs[host].location == ComputeLocation::Root;
}

} // namespace

RootTilingOptions root_tiling_options(const FunctionDAG &dag, int n, int si, const GpuProfile &gpu) {
    const Stage &st = dag.nodes[n].stages[si];
    RootTilingOptions out;
    out.loops = tileable_loops(st);
    if (out.loops.empty()) {
        out.count = 1; // nothing to tile: the parent's decision unchanged
        return out;
    }
    const std::vector<Span> bounds = dag.loop_bounds(st, dag.nodes[n].region);
    const size_t k = out.loops.size();
    std::vector<std::vector<int64_t>> sopts;
    for (int l : out.loops)
        sopts.push_back(serial_options(bounds[l].extent(), gpu.warp_size));
    std::vector<int64_t> serial_combo, thread_combo;
    std::vector<std::vector<int64_t>> topts(k);
    for_each_combination(sopts, serial_combo, [&](const std::vector<int64_t> &serial) {
        // Thread sizes (sec. 4.2): 16/32/64 on the first loop with at
        // least 16 iterations left, powers of two up to 16 elsewhere; a
        // split never exceeds the loop.
        int inner = -1;
        for (size_t q = 0; q < k && inner < 0; q++)
            if (bounds[out.loops[q]].extent() / serial[q] >= 16) inner = static_cast<int>(q);
        if (inner < 0) inner = 0;
        for (size_t q = 0; q < k; q++) {
            int64_t room = bounds[out.loops[q]].extent() / serial[q];
            std::vector<int64_t> &o = topts[q];
            o.clear();
            if (static_cast<int>(q) == inner) {
                for (int64_t t : {16, 32, 64})
                    if (t <= room) o.push_back(t);
                if (o.empty()) o.push_back(std::max<int64_t>(1, room));
            } else {
                for (int64_t t = 1; t <= 16 && t <= room; t *= 2)
                    o.push_back(t);
                if (o.empty()) o.push_back(1);
            }
        }
        for_each_combination(topts, thread_combo, [&](const std::vector<int64_t> &thread) {
            out.serial.insert(out.serial.end(), serial.begin(), serial.end());
            out.thread.insert(out.thread.end(), thread.begin(), thread.end());
            out.count++;
        });
    });
    return out;
}

void RootTilingOptions::apply(size_t i, StageTiling &t) const {
    const size_t k = loops.size();
    for (size_t q = 0; q < k; q++) {
        t.serial[loops[q]] = serial[i * k + q];
        t.thread[loops[q]] = thread[i * k + q];
    }
}

bool is_root_tiling_step(const FunctionDAG &dag, const Decisions &parent, StepId step) {
    const int n = step.node;
    if (step.phase == 0 || parent.funcs[n].location != ComputeLocation::Root) return false;
    // The update combining a split's partials in block has tilings of its own.
    return !(step.phase == static_cast<int>(dag.nodes[n].stages.size()) &&
             std::any_of(dag.nodes.begin(), dag.nodes.end(),
                         [&](const Node &p) { return p.combined_in_block_of == n; }));
}

namespace {

// ParentNests without a search's scratch: each nest built afresh.
class FreshNests final : public ParentNests {
public:
    FreshNests(const FunctionDAG &dag, const Decisions &parent, RegionMemo *memo)
        : dag_(dag), decisions_(parent), memo_(memo) {}
    const LoopNest &with(int n, const FuncDecision &f) override {
        nest_.reset();
        decisions_.funcs[n] = f;
        nest_ = std::make_unique<LoopNest>(dag_, decisions_, memo_);
        return *nest_;
    }

private:
    const FunctionDAG &dag_;
    Decisions decisions_;
    RegionMemo *memo_;
    std::unique_ptr<LoopNest> nest_;
};

// The nest of enumerate_options' parent with Func f's decision replaced by
// d: from its caller's ParentNests, or from FreshNests made when first
// needed.
using NestWith = std::function<const LoopNest &(int f, const FuncDecision &d)>;

// n computed at `loc` (in `host`); where it is tiled (Root, Block), each
// stage's tiling all 1.
FuncDecision decision_at(const Node &node, ComputeLocation loc, int host) {
    FuncDecision f;
    f.location = loc;
    f.host = host;
    f.tiled = loc == ComputeLocation::Root || loc == ComputeLocation::Block;
    if (f.tiled) {
        for (const Stage &st : node.stages)
            f.stages.push_back(StageTiling{std::vector<int64_t>(st.loops.size(), 1),
                                           std::vector<int64_t>(st.loops.size(), 1)});
    }
    return f;
}

// Whether n may be computed below root (Block or Thread level) at all.
// `eff`: its effective consumers (effective_consumers).
bool may_compute_below_root(const FunctionDAG &dag, const Decisions &parent, int n, std::set<int> &eff) {
    const Node &node = dag.nodes[n];
    // Below root only where Halide can bound n's region per block or
    // thread (FunctionDAG: Node::bounded_below_root); else lowering
    // fails with "accessed over an unbounded domain".
    bool ok = effective_consumers(dag, parent, n, eff) && !eff.empty() && node.bounded_below_root;
    // A Func with an atomic update stays at root: inside a kernel its
    // atomic stores would go to shared memory or registers, which
    // Halide's GPU backends do not all support, for no gain (its
    // RVars are the parallel loops, and below root they are serial).
    for (const Stage &st : node.stages)
        ok = ok && !st.atomic;
    // Nor where a consumer below root reads it over a reduction
    // domain sized by the image (a row sum at a kernel's Block level,
    // RDom(0, in.width())): that read does not move with the tile,
    // so united with one that does (a stencil in the same kernel) the
    // region per block is wider at the image's edges than where the
    // nest sizes it, and with the image, not a constant (fuzz seeds
    // 119 and 124 of reductions=true: Halide's bound check failed in
    // the first block). The same with a reduction over a fixed
    // window (RDom(0, 16)): united with a stencil's read, the region
    // per block spans from the window to the tile, wider the farther
    // the block is from it (the e2e test's gs_blur, once the analytic
    // model's serial chain led its search there).
    for (int c : eff) {
        if (!ok || eff.size() < 2) break; // alone, the read is sized by the domain as a whole
        const ComputeLocation cl = parent.funcs[c].location;
        if (cl != ComputeLocation::Block && cl != ComputeLocation::Thread) continue;
        for (const Stage &st : dag.nodes[c].stages)
            for (const LoopDim &l : st.loops)
                if (l.is_rvar && l.rvar_sized_by_params) ok = false;
        if (reads_at_fixed_coordinate(dag, c, n)) ok = false;
    }
    return ok;
}

// Block level: all uses inside one kernel of a single-stage Func.
void add_block_level_options(const FunctionDAG &dag, const Decisions &parent, int n, const std::set<int> &eff,
                             const GpuProfile &gpu, const NestWith &nest_with,
                             std::vector<FuncDecision> &candidates) {
    const Node &node = dag.nodes[n];
    bool all_stages_pure = true;
    for (const Stage &st : node.stages)
        all_stages_pure = all_stages_pure && st.num_pure_loops() > 0;
    int k = -1;
    for (int c : eff) {
        int kc = kernel_of(parent, c);
        if (k == -1) k = kc;
        if (kc != k) k = -2;
    }
    // Updates must stay in the consumers' tile (Node::updates_stay_in_tile):
    // a scan's region per block is its reduction domain's.
    if (k >= 0 && all_stages_pure && node.updates_stay_in_tile && dag.nodes[k].stages.size() == 1 &&
        dag.nodes[k].stages[0].num_pure_loops() > 0) {
        const LoopNest &nest = nest_with(n, decision_at(node, ComputeLocation::Block, k));
        std::vector<int> readers; // the stages of n's effective consumers (all in kernel k)
        for (size_t i = 0; i < nest.stages.size(); i++)
            if (eff.count(nest.stages[i].node)) readers.push_back(static_cast<int>(i));
        if (!(node.reads_vary_with_tile || node.paths_move_apart) ||
            extent_fixed_as_tile_moves(dag, nest, n, readers, false))
            add_block_tilings(nest, n, gpu, candidates);
    }
}

// Thread level: all uses in one single-stage consumer (or in Funcs
// at its thread level), through affine footprints only, and
// updates that write in place, so the per-thread allocation has a
// static size (Halide refuses a register allocation without one).
void add_thread_level_option(const FunctionDAG &dag, const Decisions &parent, int n, const std::set<int> &eff,
                             const NestWith &nest_with, std::vector<FuncDecision> &candidates) {
    const Node &node = dag.nodes[n];
    int host = -1;
    for (int c : eff) {
        bool inside = parent.funcs[c].location == ComputeLocation::Thread;
        if (!inside) host = host == -1 ? c : -2;
    }
    bool legal = host >= 0 && dag.nodes[host].stages.size() == 1 &&
                 (parent.funcs[host].location == ComputeLocation::Root ||
                  parent.funcs[host].location == ComputeLocation::Block);
    for (int c : eff) {
        if (!legal) break;
        if (parent.funcs[c].location == ComputeLocation::Thread && parent.funcs[c].host != host)
            legal = false;
    }
    for (int c : node.consumers) {
        if (!legal) break;
        if (!eff.count(c)) legal = false; // used through an inlined Func
        for (const Stage &st : dag.nodes[c].stages)
            for (const Edge &e : st.edges)
                if (!e.producer.is_image && e.producer.index == n && !e.affine) legal = false;
    }
    if (legal) {
        const LoopNest &pn = nest_with(n, parent.funcs[n]);
        int hidx = pn.stage_at[host][0];
        if (hidx >= 0 && pn.stages[hidx].threads > 1 &&
            (!(node.reads_vary_with_tile || node.paths_move_apart) ||
             extent_fixed_as_tile_moves(dag, pn, n, {hidx}, true)))
            candidates.push_back(decision_at(node, ComputeLocation::Thread, host));
    }
}

// The location step's options for n: at root, inlined, or below root in
// the kernel of its consumers (Block, Thread level) where Halide can size
// it there.
void add_location_options(const FunctionDAG &dag, const Decisions &parent, int n, const GpuProfile &gpu,
                          bool root_or_inline_only, const NestWith &nest_with,
                          std::vector<FuncDecision> &candidates) {
    const Node &node = dag.nodes[n];
    if (node.is_output) {
        candidates.push_back(decision_at(node, ComputeLocation::Root, -1));
    } else if (node.combined_in_block_of >= 0) {
        // A split's partials that its second level combines in block:
        // per block of the combiner's update, one thread per partial
        // (core/reduction_split.h, in_block), or at root where the
        // combiner's tiling leaves no such placement within the limits.
        if (partials_fit_in_block(dag, parent, n))
            add_block_tilings(
                nest_with(n, decision_at(node, ComputeLocation::Block, node.combined_in_block_of)), n, gpu,
                candidates);
        candidates.push_back(decision_at(node, ComputeLocation::Root, -1));
    } else if (node.always_inline) {
        candidates.push_back(decision_at(node, ComputeLocation::Inline, -1));
    } else {
        candidates.push_back(decision_at(node, ComputeLocation::Root, -1));
        if (node.can_inline) candidates.push_back(decision_at(node, ComputeLocation::Inline, -1));
        std::set<int> eff;
        const bool ok = may_compute_below_root(dag, parent, n, eff);
        if (!root_or_inline_only && ok)
            add_block_level_options(dag, parent, n, eff, gpu, nest_with, candidates);
        if (!root_or_inline_only && ok && eff.size() >= 1 && node.updates_stay_in_tile)
            add_thread_level_option(dag, parent, n, eff, nest_with, candidates);
    }
}

} // namespace

std::vector<FuncDecision> enumerate_options(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                            const GpuProfile &gpu, bool root_or_inline_only, RegionMemo *memo,
                                            ParentNests *nests, bool offer_layouts, bool offer_padding) {
    std::unique_ptr<FreshNests> fresh;
    const NestWith nest_with = [&](int f, const FuncDecision &d) -> const LoopNest & {
        if (!nests) {
            fresh = std::make_unique<FreshNests>(dag, parent, memo);
            nests = fresh.get();
        }
        return nests->with(f, d);
    };
    const int n = step.node;
    const Node &node = dag.nodes[n];
    std::vector<FuncDecision> candidates;

    if (step.phase == 0) {
        add_location_options(dag, parent, n, gpu, root_or_inline_only, nest_with, candidates);
        if (offer_layouts && !root_or_inline_only)
            add_layout_options(dag, parent, n, offer_padding, candidates);
    } else if (parent.funcs[n].location == ComputeLocation::Root &&
               step.phase == static_cast<int>(node.stages.size()) &&
               std::any_of(dag.nodes.begin(), dag.nodes.end(),
                           [&](const Node &p) { return p.combined_in_block_of == n; })) {
        // The update that combines a split's partials in block: 1 to 8 of
        // its points per block, one thread each, so that the block's
        // threads are the partials it combines (their Block-level placement
        // sizes them by this tile, and the thread limit prunes the rest).
        const int si = step.phase - 1;
        const std::vector<int> tl = tileable_loops(node.stages[si]);
        const std::vector<Span> bounds = dag.loop_bounds(node.stages[si], node.region);
        for (int64_t b = 1; b <= 8; b *= 2) {
            if (b > 1 && (tl.empty() || b > bounds[tl[0]].extent())) break;
            FuncDecision c = parent.funcs[n];
            if (!tl.empty()) c.stages[si].thread[tl[0]] = b;
            candidates.push_back(std::move(c));
        }
    } else if (parent.funcs[n].location == ComputeLocation::Root) {
        const int si = step.phase - 1;
        const RootTilingOptions options = root_tiling_options(dag, n, si, gpu);
        for (size_t i = 0; i < options.size(); i++) {
            FuncDecision c = parent.funcs[n];
            options.apply(i, c.stages[si]);
            candidates.push_back(std::move(c));
        }
    } else {
        candidates.push_back(parent.funcs[n]); // nothing to tile for this Func at this step
    }

    return candidates;
}

Verdict classify_candidate(const FunctionDAG &dag, const Decisions &d, StepId step, const GpuProfile &gpu,
                           const PruningLimits &limits) {
    // A pass-through step leaves the (already checked) parent unchanged.
    if (is_pass_through(d, step)) return Verdict::Ok;
    LoopNest nest(dag, d);
    return classify_candidate(nest, step, gpu, limits);
}

Verdict classify_candidate(const LoopNest &nest, StepId step, const GpuProfile &gpu,
                           const PruningLimits &limits) {
    if (is_pass_through(nest.decisions, step)) return Verdict::Ok;
    if (!check_hard(nest.dag, nest.decisions, nest, gpu, limits, step.node).empty()) return Verdict::Hard;
    return meets_soft(nest.dag, nest, gpu, limits, step) ? Verdict::Ok : Verdict::Soft;
}

bool is_pass_through(const Decisions &d, StepId step) {
    return step.phase > 0 && d.funcs[step.node].location != ComputeLocation::Root;
}

std::vector<Decisions> enumerate_children(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                          const GpuProfile &gpu, const PruningLimits &limits,
                                          EnumerationStats *stats) {
    std::vector<Decisions> candidates = enumerate_candidates(dag, parent, step, gpu);
    if (stats) stats->enumerated += static_cast<int64_t>(candidates.size());
    std::vector<Decisions> hard_ok;
    std::vector<bool> soft_ok;
    for (Decisions &c : candidates) {
        Verdict v = classify_candidate(dag, c, step, gpu, limits);
        if (v == Verdict::Hard) {
            if (stats) stats->pruned_hard++;
            continue;
        }
        soft_ok.push_back(v == Verdict::Ok);
        hard_ok.push_back(std::move(c));
    }
    bool any_soft = std::find(soft_ok.begin(), soft_ok.end(), true) != soft_ok.end();
    if (!any_soft) return hard_ok;
    std::vector<Decisions> out;
    for (size_t i = 0; i < hard_ok.size(); i++) {
        if (soft_ok[i])
            out.push_back(std::move(hard_ok[i]));
        else if (stats)
            stats->pruned_soft++;
    }
    return out;
}

uint64_t func_structural_hash(int n, const FuncDecision &f, int depth) {
    int level = f.location == ComputeLocation::Root || f.location == ComputeLocation::Unscheduled ? 0
                : f.location == ComputeLocation::Block                                            ? 1
                                                                                                  : 2;
    if (level > depth) return 0;
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<uint64_t>(n));
    mix(static_cast<uint64_t>(f.location));
    mix(static_cast<uint64_t>(f.host + 1));
    if (f.storage_innermost != 0) mix(static_cast<uint64_t>(f.storage_innermost) << 32);
    if (f.pad_shared) mix(uint64_t(1) << 48);
    if (structural_hash_reads_tiling(depth)) {
        for (const StageTiling &t : f.stages) {
            // Outer levels first, as in the loop nest: which loops are split
            // (3), then the thread (and so block) sizes (4), the serial
            // sizes last (6).
            for (int64_t v : t.thread)
                mix(static_cast<uint64_t>(structural_thread_key(v, depth)));
            for (int64_t v : t.serial)
                mix(static_cast<uint64_t>(structural_serial_key(v, depth)));
        }
    }
    // Finalizer (splitmix64): the sum over Funcs needs well-spread terms.
    h += 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

uint64_t structural_hash(const Decisions &d, int depth) {
    uint64_t h = 0;
    for (size_t n = 0; n < d.funcs.size(); n++)
        h += func_structural_hash(static_cast<int>(n), d.funcs[n], depth);
    return h;
}

} // namespace gpusched
