#include "core/search_space.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "core/loop_nest.h"
#include "core/root_stage_launch.h"
#include "core/storage_layout.h"

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

// Whether a stage of c reads n directly at a coordinate that only its RVars
// move (a reduction over a fixed window of n: row_max(y) = max over r of
// n(r, y)): that read stays put as c's tile moves.
bool reads_at_fixed_coordinate(const FunctionDAG &dag, int c, int n) {
    for (const Stage &st : dag.nodes[c].stages) {
        for (const Access &a : st.accesses) {
            if (a.is_self || a.producer.is_image || a.producer.index != n) continue;
            for (const auto &row : a.jacobian) {
                bool by_pure = false, by_rvar = false;
                for (size_t l = 0; l < st.loops.size() && l < row.size(); l++) {
                    const bool moves = !row[l] || *row[l] != 0; // unknown: may move
                    if (!moves) continue;
                    if (st.loops[l].is_rvar)
                        by_rvar = true;
                    else
                        by_pure = true;
                }
                if (by_rvar && !by_pure) return true;
            }
        }
    }
    return false;
}

// Where the tile is put to see how a region changes as it moves (per block:
// the kernel root's tile in its realization; per thread: the host's thread
// tile in its block). The base position is one tile in from the corner in
// every pure dimension with room for three tiles (away from boundary
// clamps), else the first tile; moved(i) is the base moved one tile along
// pure dimension i alone, or nothing when there is no room for a second
// tile there. One dimension at a time, because reads that move with
// different dimensions (f(x, y) beside f(y, x)) separate along either one,
// and not along a diagonal.
struct TilePositions {
    const Stage &st;
    const std::vector<Span> &tile, &room;

    std::vector<Span> base() const {
        std::vector<Span> l = tile;
        for (size_t i = 0; i < l.size(); i++)
            if (!st.loops[i].is_rvar) place(l, i, base_index(i));
        return l;
    }
    std::optional<std::vector<Span>> moved(size_t i) const {
        if (st.loops[i].is_rvar || tiles(i) < 2) return std::nullopt;
        std::vector<Span> l = base();
        place(l, i, base_index(i) + 1);
        return l;
    }
    // Whether moved(i) lies clear of the room's far end.
    bool moved_clear_of_end(size_t i) const { return base_index(i) + 2 < tiles(i); }

private:
    int64_t tiles(size_t i) const { return room[i].extent() / std::max<int64_t>(1, tile[i].extent()); }
    int64_t base_index(size_t i) const { return tiles(i) >= 3 ? 1 : 0; }
    void place(std::vector<Span> &l, size_t i, int64_t k) const {
        const int64_t t = std::max<int64_t>(1, tile[i].extent());
        l[i].min = room[i].min + k * t;
        l[i].max = l[i].min + t - 1;
    }
};

// n's region per block of `kernel` when the kernel's root stage runs the
// block `root_tile`: what the root stage reads of the Funcs computed inside
// the kernel, then what those read, consumers before producers (a consumer
// has a lower index), each region grown by its updates. This is how Halide
// sizes them, symbolically in the block's position: through the whole chain
// of Funcs inside the kernel, not only n's direct readers, whose own regions
// move with the block as well.
Region region_in_kernel_at(const FunctionDAG &dag, const LoopNest &nest, int kernel, int n,
                           const std::vector<Span> &root_tile) {
    std::map<int, Region> inside; // Funcs of this kernel below its root, by node
    auto inside_kernel = [&](int c) {
        if (c < 0 || c == nest.kernels[kernel].node) return false;
        const ComputeLocation l = nest.location(c);
        if (l != ComputeLocation::Block && l != ComputeLocation::Thread) return false;
        const int idx = nest.stage_at[c][0];
        return idx >= 0 && nest.stages[idx].kernel == kernel;
    };
    auto read_by = [&](const Stage &st, const std::vector<Span> &loops) {
        // Named: a range-for over *demand(...) would outlive the map it owns.
        const auto reads = nest.demand(st, loops);
        for (const auto &[p, r] : *reads)
            if (!p.is_image && inside_kernel(p.index)) merge_region(inside[p.index], r);
    };
    const Kernel &k = nest.kernels[kernel];
    read_by(dag.nodes[k.node].stages[k.stage], root_tile);
    std::vector<Span> loops;
    for (int c = 0; c < n; c++) {
        auto it = inside.find(c);
        if (it == inside.end()) continue;
        Region rc = it->second;
        dag.grow_by_updates(c, rc);
        for (const Stage &st : dag.nodes[c].stages) {
            loops = dag.loop_bounds(st, rc);
            read_by(st, loops);
        }
    }
    auto it = inside.find(n);
    if (it == inside.end()) return {};
    Region r = it->second;
    dag.grow_by_updates(n, r);
    return r;
}

// Halide sizes a Func computed inside a kernel (Block or Thread level) by the
// union of what the kernel's stages read of it per block (per thread),
// symbolically in the position of the tile. When two reads move differently
// with the tile, e.g. f(x, y) beside f(y, x) (a transpose), that union's
// extent grows with the tile's distance from the diagonal: Halide then
// launches the threads the largest block needs, past the 1024 limit
// (random_pipeline seed 46: CL_INVALID_WORK_GROUP_SIZE), or cannot size the
// registers, or sizes shared memory for a tile where another block needs
// more (seeds 1141, 1500: a reader of n that is itself inside the kernel
// has a region that moves with the block too). The nest's regions are for
// one tile, so this moves the tile one tile along each dimension in turn
// (TilePositions) and compares n's extents: per block, the kernel root's
// tile, with the chain of Funcs inside the kernel recomputed from it
// (region_in_kernel_at); per thread (per_thread), the host's thread tile
// inside its block. `stages`: the consumer stages of n (per thread: its
// host's stage).
bool extent_fixed_as_tile_moves(const FunctionDAG &dag, const LoopNest &nest, int n,
                                const std::vector<int> &stages, bool per_thread) {
    // Moving one tile along dimension i: a region that grows by more than
    // the two points rounding moves a footprint by (x / 2 between tile
    // positions; the nest sizes those by their largest extent, sized_by_max)
    // does not have a fixed size. One that shrinks counts too where the
    // moved tile is clear of the far end; at the far end boundary clamps
    // shrink regions that are fixed everywhere else.
    auto fixed = [&](const TilePositions &at,
                     const std::function<Region(const std::vector<Span> &)> &region_at) {
        const Region ra = region_at(at.base());
        if (ra.empty()) return true;
        for (size_t i = 0; i < at.tile.size(); i++) {
            const std::optional<std::vector<Span>> m = at.moved(i);
            if (!m) continue;
            const Region rb = region_at(*m);
            const bool clear = at.moved_clear_of_end(i);
            for (size_t d = 0; d < ra.size() && d < rb.size(); d++) {
                const int64_t grew = rb[d].extent() - ra[d].extent();
                if (grew > 2 || (clear && grew < -2)) return false;
            }
        }
        return true;
    };
    if (!per_thread) {
        std::set<int> kernels;
        for (int idx : stages)
            kernels.insert(nest.stages[idx].kernel);
        for (int kernel : kernels) {
            if (kernel < 0) continue;
            const Kernel &k = nest.kernels[kernel];
            const ScheduledStage &root = nest.stages[nest.stage_at[k.node][k.stage]];
            const TilePositions at{dag.nodes[k.node].stages[k.stage], root.loops_block,
                                   root.loops_realization};
            if (!fixed(at, [&](const std::vector<Span> &tile) {
                    return region_in_kernel_at(dag, nest, kernel, n, tile);
                }))
                return false;
        }
        return true;
    }
    for (int idx : stages) {
        const ScheduledStage &ss = nest.stages[idx];
        const Stage &st = dag.nodes[ss.node].stages[ss.stage];
        const TilePositions at{st, ss.loops_thread, ss.loops_block};
        if (!fixed(at, [&](const std::vector<Span> &loops) {
                const auto dm = nest.demand(st, loops);
                auto it = dm->find(ProducerRef{n, false});
                Region r;
                if (it == dm->end()) return r;
                r = it->second;
                dag.grow_by_updates(n, r);
                return r;
            }))
            return false;
    }
    return true;
}

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

} // namespace

std::vector<FuncDecision> enumerate_options(const FunctionDAG &dag, const Decisions &parent, StepId step,
                                            const GpuProfile &gpu, bool root_or_inline_only, RegionMemo *memo,
                                            ParentNests *nests, bool offer_layouts, bool offer_padding) {
    std::unique_ptr<FreshNests> fresh;
    auto nest_with = [&](int f, const FuncDecision &d) -> const LoopNest & {
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
        auto with = [&](ComputeLocation loc, int host) {
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
        };
        if (node.is_output) {
            candidates.push_back(with(ComputeLocation::Root, -1));
        } else if (node.combined_in_block_of >= 0) {
            // A split's partials that its second level combines in block:
            // per block of the combiner's update, one thread per partial
            // (core/reduction_split.h, in_block), or at root where the
            // combiner's tiling leaves no such placement within the limits.
            if (partials_fit_in_block(dag, parent, n))
                add_block_tilings(nest_with(n, with(ComputeLocation::Block, node.combined_in_block_of)), n,
                                  gpu, candidates);
            candidates.push_back(with(ComputeLocation::Root, -1));
        } else if (node.always_inline) {
            candidates.push_back(with(ComputeLocation::Inline, -1));
        } else {
            candidates.push_back(with(ComputeLocation::Root, -1));
            if (node.can_inline) candidates.push_back(with(ComputeLocation::Inline, -1));
            std::set<int> eff;
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
            bool all_stages_pure = true;
            for (const Stage &st : node.stages)
                all_stages_pure = all_stages_pure && st.num_pure_loops() > 0;
            // Block level: all uses inside one kernel of a single-stage Func.
            int k = -1;
            for (int c : eff) {
                int kc = kernel_of(parent, c);
                if (k == -1) k = kc;
                if (kc != k) k = -2;
            }
            // Updates must stay in the consumers' tile (Node::updates_stay_in_tile):
            // a scan's region per block is its reduction domain's.
            if (!root_or_inline_only && ok && k >= 0 && all_stages_pure && node.updates_stay_in_tile &&
                dag.nodes[k].stages.size() == 1 && dag.nodes[k].stages[0].num_pure_loops() > 0) {
                const LoopNest &nest = nest_with(n, with(ComputeLocation::Block, k));
                std::vector<int> readers; // the stages of n's effective consumers (all in kernel k)
                for (size_t i = 0; i < nest.stages.size(); i++)
                    if (eff.count(nest.stages[i].node)) readers.push_back(static_cast<int>(i));
                if (!(node.reads_vary_with_tile || node.paths_move_apart) ||
                    extent_fixed_as_tile_moves(dag, nest, n, readers, false))
                    add_block_tilings(nest, n, gpu, candidates);
            }
            // Thread level: all uses in one single-stage consumer (or in Funcs
            // at its thread level), through affine footprints only, and
            // updates that write in place, so the per-thread allocation has a
            // static size (Halide refuses a register allocation without one).
            if (!root_or_inline_only && ok && eff.size() >= 1 && node.updates_stay_in_tile) {
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
                        candidates.push_back(with(ComputeLocation::Thread, host));
                }
            }
        }
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
