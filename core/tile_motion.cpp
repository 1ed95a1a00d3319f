#include "core/tile_motion.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace gpusched {

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

namespace {

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

} // namespace

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

} // namespace gpusched
