#include "core/below_root_regions.h"

#include <algorithm>
#include <map>

#include "core/shift_shape.h"

namespace gpusched {

LoopNest::BelowRootRegions::BelowRootRegions(LoopNest &nest) : nest_(nest) {
    const size_t n_nodes = nest.dag.nodes.size();
    for (int side = 0; side < 2; side++) {
        nest.shift_base_done_[side].clear(); // sized on first use in this build
        if (nest.shift_base_[side].size() < n_nodes) nest.shift_base_[side].resize(n_nodes);
    }
}

// Visits the stages that may read node n per block of `kernel` (per
// thread of n's host, for Thread level): those of the Funcs above n in
// the kernel, the host's and its other Thread-level Funcs' per thread.
// `tile_moves`: the stage is the tile that moves (the kernel's root
// stage per block, the host per thread); the others move with their own
// regions. Both the region walks and their shapes go through here.
template <typename Visit>
void LoopNest::BelowRootRegions::for_each_reader(int n, int kernel, bool per_thread, Visit &&visit) const {
    const Decisions &d = nest_.decisions;
    for (int c = 0; c < n; c++) {
        for (int idx : nest_.stage_at[c]) {
            if (idx < 0 || nest_.stages[idx].kernel != kernel) continue;
            const ScheduledStage &ss = nest_.stages[idx];
            const bool host_thread =
                per_thread && (c == d.funcs[n].host || (nest_.location(c) == ComputeLocation::Thread &&
                                                        d.funcs[c].host == d.funcs[n].host));
            if (per_thread && !host_thread) continue;
            const bool tile_moves =
                per_thread ? c == d.funcs[n].host : nest_.location(c) == ComputeLocation::Root;
            visit(c, ss, nest_.dag.nodes[c].stages[ss.stage], tile_moves);
        }
    }
}

Region LoopNest::BelowRootRegions::consumers_in_kernel(int n, int kernel, bool per_thread, int64_t shift) {
    // The producer's region: union of what the consumers in this kernel
    // need per block (or per thread of the host, for Thread level).
    Region r;
    std::vector<Span> moved;
    for_each_reader(
        n, kernel, per_thread, [&](int c, const ScheduledStage &ss, const Stage &st, bool tile_moves) {
            if (shift > 0 && !tile_moves) {
                // Its region at this shift, sized as the nest sizes it
                // (by its largest extent, where it is sized by its max).
                Region rc = region_at_shift(c, kernel, per_thread, shift);
                const Region &sized = per_thread ? nest_.realization_region[c] : nest_.block_region[c];
                if (sized_by_max(nest_.dag.nodes[c])) {
                    for (size_t i = 0; i < rc.size() && i < sized.size(); i++)
                        rc[i].max = std::max(rc[i].max, rc[i].min + sized[i].extent() - 1);
                }
                loop_bounds_into(st, rc, moved);
            } else {
                // Moved even past the end of its realization: the sizes
                // are estimates, the real image may be any size, and
                // ShiftInwards puts the last tile at any start.
                moved = per_thread ? ss.loops_thread : ss.loops_block;
                for (size_t i = 0; shift > 0 && i < moved.size(); i++) {
                    if (st.loops[i].is_rvar) continue;
                    moved[i].min += shift;
                    moved[i].max += shift;
                }
            }
            const auto dm = nest_.demand(st, moved);
            auto it = dm->find(ProducerRef{n, false});
            if (it != dm->end()) merge_region(r, it->second);
        });
    return r;
}

// The region of node n per block (per thread of its host, for Thread
// level) when the kernel's tile is moved by `shift` points in every pure
// loop. A tile that moves is the one that is repeated: the kernel's root
// stage per block (its host's thread tile, per thread). A consumer below
// root in the same kernel does not move on its own: its region is the
// one it has at that shift, recursively, because through a chain of
// rounding divisions (x/2, (x-1)/2 ...) each level's region depends on
// the tile's start (fuzz seed 47: a stencil over a bilinear upsample over
// a stencil needs one more column of the first stencil per block when the
// block starts at an odd column, which the shifted last tile of
// ShiftInwards does). Shifted regions are computed only for Funcs sized
// by their maximum and the consumers they go through, and kept per
// (node, shift) for this build.
const Region &LoopNest::BelowRootRegions::region_at_shift(int n, int kernel, bool per_thread, int64_t shift) {
    const size_t n_nodes = nest_.dag.nodes.size();
    const int side = per_thread ? 1 : 0;
    if (shifted_[side].empty()) {
        shifted_[side].resize(n_nodes * kResidues);
        shifted_done_[side].assign(n_nodes * kResidues, 0);
    }
    const size_t key = static_cast<size_t>(n) * kResidues + static_cast<size_t>(shift);
    if (!shifted_done_[side][key]) {
        // Remembered across builds like the unshifted regions (it depends
        // on the same decisions, and on the shift): a Func sized by its
        // maximum needs its consumers' regions at every shift, and
        // without the memo each of its misses walked their whole chain
        // again (camera_pipe's demosaic: most of the search's time).
        // The shift leads the key, negative: unshifted keys lead with n.
        // The key past the shift is the same at every shift: it is made
        // once per (side, Func) and build (making it at each of the 31
        // shifts was 11-14% of a pyramid's and camera_pipe's search).
        // The consumers' regions below are found the same way, so the
        // key is made again (from the kept part) before it is stored.
        auto make_shift_key = [&]() -> const std::vector<int64_t> & {
            if (nest_.shift_base_done_[side].empty()) nest_.shift_base_done_[side].assign(n_nodes, 0);
            std::vector<int64_t> &base = nest_.shift_base_[side][n];
            if (!nest_.shift_base_done_[side][n]) {
                nest_.below_root_key(n, kernel, per_thread, base);
                nest_.shift_base_done_[side][n] = 1;
            }
            std::vector<int64_t> &shift_key = nest_.shift_key_;
            shift_key.clear();
            shift_key.push_back(-shift);
            shift_key.insert(shift_key.end(), base.begin(), base.end());
            return shift_key;
        };
        RegionMemo *memo = nest_.memo_;
        const Region *known = memo ? memo->find(make_shift_key()) : nullptr;
        if (known) {
            shifted_[side][key] = *known;
        } else {
            Region r = consumers_in_kernel(n, kernel, per_thread, shift);
            if (!r.empty()) nest_.dag.grow_by_updates(n, r);
            if (memo) memo->insert(make_shift_key(), r);
            shifted_[side][key] = std::move(r);
        }
        shifted_done_[side][key] = 1;
    }
    return shifted_[side][key];
}

// What stage st demands of node `target` over loops of these shapes,
// through the inlined Funcs it reads, as demand_walk expands them.
RegionShape LoopNest::BelowRootRegions::demand_shape(const Stage &st, const std::vector<SpanShape> &loops,
                                                     int target) const {
    RegionShape out;
    std::map<int, RegionShape> pending; // inlined Funcs, as demand_walk expands them
    auto expand = [&](const Stage &s, const std::vector<SpanShape> &lb) {
        for (const Edge &e : s.edges) {
            if (e.producer.is_image) continue;
            const int p = e.producer.index;
            const bool inlined = nest_.location(p) == ComputeLocation::Inline;
            if (inlined || p == target) merge_shape(inlined ? pending[p] : out, required_shape(e, lb));
        }
    };
    expand(st, loops);
    std::vector<SpanShape> lb;
    drain_in_dag_order(pending, [&](int node, const RegionShape &region) {
        const Stage &ps = nest_.dag.nodes[node].stages[0];
        loop_shapes_into(ps, region, lb);
        expand(ps, lb);
    });
    return out;
}

// The shape of node n's region as the tile moves (core/shift_shape.h),
// followed the way region_at_shift computes the region at a shift: the
// consumers in the kernel (the tile's own stages moved, the others at
// their own shapes, sized by their largest extent where the nest sizes
// them so), what each demands through inlined Funcs, the updates'
// growth. Made once per side and Func in this build.
const RegionShape &LoopNest::BelowRootRegions::shape_at_shift(int n, int kernel, bool per_thread) {
    const FunctionDAG &dag = nest_.dag;
    const int side = per_thread ? 1 : 0;
    if (shapes_[side].empty()) {
        shapes_[side].resize(dag.nodes.size());
        shapes_done_[side].assign(dag.nodes.size(), 0);
    }
    if (!shapes_done_[side][n]) {
        // A reader that reads n through a bound that is not integer
        // arithmetic (a data-dependent or float index) leaves it
        // unknown: found before any shape is made.
        bool opaque = false;
        for_each_reader(n, kernel, per_thread, [&](int, const ScheduledStage &, const Stage &st, bool) {
            for (const Edge &e : st.edges)
                opaque = opaque || (!e.producer.is_image && e.producer.index == n && !e.shift_traceable);
        });
        RegionShape r;
        if (opaque) {
            r.assign(dag.nodes[n].region.size(), {BoundShape::unknown(), BoundShape::unknown()});
        } else {
            std::vector<SpanShape> loops;
            for_each_reader(
                n, kernel, per_thread, [&](int c, const ScheduledStage &, const Stage &st, bool tile_moves) {
                    // Only a stage that reads n, or an inlined Func, can demand n.
                    const bool may_read = std::any_of(st.edges.begin(), st.edges.end(), [&](const Edge &e) {
                        return !e.producer.is_image &&
                               (e.producer.index == n ||
                                nest_.location(e.producer.index) == ComputeLocation::Inline);
                    });
                    if (!may_read) return;
                    if (tile_moves) {
                        moving_loop_shapes(st, loops);
                    } else {
                        RegionShape rc = shape_at_shift(c, kernel, per_thread);
                        // Sizing by the largest extent applies where the
                        // nest sizes c so; assuming it elsewhere only
                        // weakens what is known.
                        if (sized_by_max(dag.nodes[c])) size_by_constant_extent(rc);
                        loop_shapes_into(st, rc, loops);
                    }
                    merge_shape(r, demand_shape(st, loops, n));
                });
            const Node &node = dag.nodes[n];
            for (int round = 0; round < 2 && !r.empty(); round++) { // as FunctionDAG::grow_by_updates
                for (size_t si = 1; si < node.stages.size(); si++) {
                    const Stage &st = node.stages[si];
                    if (st.self_box.compiled_box.size() != r.size()) continue;
                    loop_shapes_into(st, r, loops);
                    merge_shape(r, required_shape(st.self_box, loops));
                }
            }
        }
        shapes_[side][n] = std::move(r);
        shapes_done_[side][n] = 1;
    }
    return shapes_[side][n];
}

// What the shape says of node n's extent, remembered across builds by
// what the shape is made from: the kernel, n's host, and per Func above
// n its location, which of its stages are in the kernel and whether it
// shares n's host (the tiles' sizes do not enter it; most region misses
// differ from an earlier build only in those).
ShiftWalks LoopNest::BelowRootRegions::shift_verdict(int n, int kernel, bool per_thread) {
    LoopNest &nest = nest_;
    const Decisions &d = nest.decisions;
    std::vector<int64_t> &key = nest.verdict_key_;
    key.clear();
    key.push_back(n);
    key.push_back(per_thread ? 1 : 0);
    key.push_back(nest.kernels[kernel].node);
    key.push_back(nest.kernels[kernel].stage);
    key.push_back(per_thread ? d.funcs[n].host : -1);
    for (int c = 0; c < n; c++) {
        key.push_back(static_cast<int64_t>(nest.location(c)) | (d.funcs[c].host == d.funcs[n].host ? 8 : 0));
        uint64_t in_kernel = 0; // which of c's stages, 64 to a word
        for (size_t si = 0; si < nest.stage_at[c].size(); si++) {
            const int idx = nest.stage_at[c][si];
            if (idx >= 0 && nest.stages[idx].kernel == kernel) in_kernel |= uint64_t(1) << (si % 64);
            if (si % 64 == 63 || si + 1 == nest.stage_at[c].size()) {
                key.push_back(static_cast<int64_t>(in_kernel));
                in_kernel = 0;
            }
        }
    }
    if (auto known = nest.shift_verdicts_.find(key); known != nest.shift_verdicts_.end())
        return known->second;
    const ShiftWalks w = shift_walks(shape_at_shift(n, kernel, per_thread), kResidues);
    const size_t bytes = key.size() * sizeof(int64_t) + 64; // key, walks, hash node
    if (nest.shift_verdict_bytes_ + bytes > kMaxShiftVerdictBytes) {
        nest.shift_verdicts_.clear();
        nest.shift_verdict_bytes_ = 0;
    }
    nest.shift_verdicts_.emplace(key, w);
    nest.shift_verdict_bytes_ += bytes;
    return w;
}

// The producer's region per block (per thread), grown by what its
// updates touch; where it can change extent as the tile moves
// (sized_by_max), each extent is the largest over every residue of the
// tile's start, which schedule_apply fixes with bound_extent: Halide
// sees that start as a free symbol and otherwise sizes the threads and
// shared memory at run time (a pyramid's upsampling levels, issue 12).
// A region comes from the memo when an earlier build had the same key
// (most do: a search step changes one Func).
Region LoopNest::BelowRootRegions::region(int n, int kernel, bool per_thread) {
    RegionMemo *memo = nest_.memo_;
    std::vector<int64_t> &key = nest_.key_;
    if (memo) {
        nest_.below_root_key(n, kernel, per_thread, key);
        if (const Region *known = memo->find(key)) return *known;
    }
    Region r = consumers_in_kernel(n, kernel, per_thread, 0);
    if (!r.empty()) nest_.dag.grow_by_updates(n, r);
    // Every shift is walked unless the region's shape says which give
    // its largest extents (core/shift_shape.h): one period of a
    // repeating extent, the last shift too where one is convex.
    const bool walk = !r.empty() && sized_by_max(nest_.dag.nodes[n]);
    ShiftWalks walks;
    if (walk && nest_.tile_starts_ == TileStarts::WhereShapeAllows)
        walks = shift_verdict(n, kernel, per_thread);
    auto widen_to_shift = [&](int64_t shift) {
        const Region &m = region_at_shift(n, kernel, per_thread, shift);
        for (size_t i = 0; i < r.size() && i < m.size(); i++)
            r[i].max = std::max(r[i].max, r[i].min + m[i].extent() - 1);
    };
    if (walk) {
        const int64_t until = walks.every ? kResidues - 1 : walks.until;
        const bool last = !walks.every && walks.last;
        for (int64_t shift = 1; shift <= until; shift++)
            widen_to_shift(shift);
        if (last) widen_to_shift(kResidues - 1);
        nest_.shift_walks_saved += (kResidues - 1) - until - (last ? 1 : 0);
    }
    if (memo) memo->insert(key, r);
    return r;
}

} // namespace gpusched
