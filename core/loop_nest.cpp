#include "core/loop_nest.h"

#include <algorithm>
#include <cassert>
#include <functional>

#include "core/root_stage_launch.h"
#include "core/shift_shape.h"

namespace gpusched {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// The tile of `tile` points with index `index` in span s, shifted inwards at
// the end the way Halide's ShiftInwards tail strategy does.
Span tile_at(const Span &s, int64_t tile, int64_t index) {
    Span t{s.min + index * tile, s.min + index * tile + tile - 1};
    if (t.max > s.max) {
        t.max = s.max;
        t.min = std::max(s.min, s.max - tile + 1);
    }
    return t;
}

} // namespace

ComputeLocation LoopNest::location(int node) const {
    return decisions.funcs[node].location;
}

MemoryLevel LoopNest::memory_level(const ProducerRef &p) const {
    if (p.is_image) return MemoryLevel::Global;
    switch (location(p.index)) {
    case ComputeLocation::Block:
        return MemoryLevel::Shared;
    case ComputeLocation::Thread:
        return MemoryLevel::Register;
    default:
        return MemoryLevel::Global;
    }
}

const Region &LoopNest::allocation(const ProducerRef &p) const {
    if (p.is_image) return dag.images[p.index].region;
    const Region &r = realization_region[p.index];
    return r.empty() ? dag.nodes[p.index].region : r;
}

int LoopNest::storage_innermost(const ProducerRef &p) const {
    if (p.is_image) return 0;
    const FuncDecision &f = decisions.funcs[p.index];
    return f.location == ComputeLocation::Root || f.location == ComputeLocation::Block ? f.storage_innermost
                                                                                       : 0;
}

int64_t LoopNest::storage_padding(const ProducerRef &p) const {
    if (p.is_image || !decisions.funcs[p.index].pad_shared ||
        decisions.funcs[p.index].location != ComputeLocation::Block)
        return 0;
    const int idx = stage_at[p.index][0];
    const Region &r = realization_region[p.index];
    if (idx < 0 || r.empty()) return 0;
    const int alignment =
        shared_storage_alignment(dag.nodes[p.index], kernels[stages[idx].kernel].widest_shared_element);
    const int64_t extent = std::max<int64_t>(1, r[0].extent());
    return stored_extent(extent, alignment, true) - extent;
}

std::shared_ptr<const std::map<ProducerRef, Region>>
LoopNest::demand(const Stage &s, const std::vector<Span> &loop_bounds) const {
    if (!memo_) return std::make_shared<const std::map<ProducerRef, Region>>(demand_walk(s, loop_bounds));
    // What it depends on: the stage, its bounds and which of its producers
    // are inlined (the walk reaches no other Func).
    std::vector<int64_t> &key = demand_key_;
    key.clear();
    key.push_back(s.node);
    key.push_back(s.index);
    key.push_back(static_cast<int64_t>(loop_bounds.size()));
    for (const Span &b : loop_bounds) {
        key.push_back(b.min);
        key.push_back(b.max);
    }
    append_inlined_bits(s.node, static_cast<int>(dag.nodes.size()), key);
    if (std::shared_ptr<const RegionMemo::Demand> known = memo_->find_demand(key)) return known;
    auto out = std::make_shared<const std::map<ProducerRef, Region>>(demand_walk(s, loop_bounds));
    memo_->insert_demand(key, out);
    return out;
}

std::shared_ptr<const EffectiveAccesses> LoopNest::accesses(const Stage &s) const {
    if (!memo_) return std::make_shared<const EffectiveAccesses>(collect_accesses(*this, s));
    // The walk reaches only producers, whose indices are above s.node: the
    // key holds which of those are inlined, so states that differ only in
    // the consumers' decisions share the entry.
    std::vector<int64_t> &key = access_key_;
    key.clear();
    key.push_back(s.node);
    key.push_back(s.index);
    append_inlined_bits(s.node, static_cast<int>(dag.nodes.size()), key);
    if (std::shared_ptr<const EffectiveAccesses> known = memo_->find_accesses(key)) return known;
    auto out = std::make_shared<const EffectiveAccesses>(collect_accesses(*this, s));
    memo_->insert_accesses(key, out);
    return out;
}

std::map<ProducerRef, Region> LoopNest::demand_walk(const Stage &s,
                                                    const std::vector<Span> &loop_bounds) const {
    std::map<ProducerRef, Region> out;
    // Each inlined Func is expanded once, over the union of what its callers
    // need (drain_in_dag_order).
    std::map<int, Region> pending;
    auto expand = [&](const Stage &st, const std::vector<Span> &lb) {
        for (const Edge &e : st.edges) {
            Region r = dag.required_or_all(st, e, lb);
            if (!e.producer.is_image && location(e.producer.index) == ComputeLocation::Inline)
                merge_region(pending[e.producer.index], r);
            else
                merge_region(out[e.producer], r);
        }
    };
    expand(s, loop_bounds);
    drain_in_dag_order(pending, [&](int node, const Region &region) {
        const Stage &ps = dag.nodes[node].stages[0];
        expand(ps, dag.loop_bounds(ps, region));
    });
    return out;
}

Region LoopNest::written(const Stage &s, const std::vector<Span> &loop_bounds) const {
    const Node &n = dag.nodes[s.node];
    Region r = n.region;
    for (size_t i = 0; i < s.loops.size(); i++) {
        if (!s.loops[i].is_rvar) r[s.loops[i].func_arg] = loop_bounds[i];
    }
    return r;
}

LoopNest::LoopNest(const FunctionDAG &dag_, const Decisions &d, RegionMemo *memo, TileStarts tile_starts)
    : dag(dag_), decisions(d), memo_(memo), tile_starts_(tile_starts) {
    rebuild();
}

void LoopNest::append_inlined_bits(int from, int to, std::vector<int64_t> &key) const {
    // Every word of the build's bitset, with the bits of Funcs outside
    // [from, to) cleared.
    for (size_t w = 0; w < inlined_words_.size(); w++) {
        uint64_t bits = inlined_words_[w];
        const int first = static_cast<int>(w) * 64; // the Func of bit 0
        if (from > first) bits &= from - first >= 64 ? 0 : ~((uint64_t(1) << (from - first)) - 1);
        if (to < first + 64) bits &= to <= first ? 0 : (uint64_t(1) << (to - first)) - 1;
        key.push_back(static_cast<int64_t>(bits));
    }
}

void LoopNest::below_root_key(int n, int kernel, bool per_thread, std::vector<int64_t> &key) const {
    key.clear();
    key.push_back(n);
    key.push_back(per_thread);
    key.push_back(kernels[kernel].node);
    key.push_back(kernels[kernel].stage);
    key.push_back(per_thread ? decisions.funcs[n].host : -1);
    // demand() reads through inlined Funcs; only consumers (lower indices)
    // lie between n's readers and n.
    append_inlined_bits(0, n, key);
    for (int c = 0; c < n; c++) {
        bool in_kernel = false;
        for (int idx : stage_at[c])
            in_kernel = in_kernel || (idx >= 0 && stages[idx].kernel == kernel);
        if (!in_kernel) continue;
        const FuncDecision &f = decisions.funcs[c];
        key.push_back(c);
        key.push_back(static_cast<int64_t>(f.location));
        key.push_back(f.host);
        key.push_back(f.tiled);
        key.push_back(static_cast<int64_t>(f.stages.size()));
        for (const StageTiling &t : f.stages) {
            key.push_back(static_cast<int64_t>(t.serial.size()));
            key.insert(key.end(), t.serial.begin(), t.serial.end());
            key.push_back(static_cast<int64_t>(t.thread.size()));
            key.insert(key.end(), t.thread.begin(), t.thread.end());
        }
    }
}

namespace {

template <typename T> T take(std::vector<T> &spare) {
    if (spare.empty()) return T{};
    T t = std::move(spare.back());
    spare.pop_back();
    return t;
}

} // namespace

int64_t stored_extent(int64_t extent, int alignment, bool padded) {
    const int64_t a = std::max(1, alignment);
    return ceil_div(std::max<int64_t>(1, extent) + (padded ? 1 : 0), a) * a;
}

int64_t padded_region_points(const Region &region, int alignment, bool padded) {
    if (region.empty() || (alignment <= 1 && !padded)) return region_points(region);
    const int64_t inner = std::max<int64_t>(1, region[0].extent());
    return region_points(region) / inner * stored_extent(inner, alignment, padded);
}

void LoopNest::count_shared_memory(Kernel &k) const {
    k.widest_shared_element = 0;
    for (int idx : k.stages)
        if (stages[idx].location == ComputeLocation::Block && stages[idx].stage == 0)
            k.widest_shared_element =
                std::max(k.widest_shared_element, dag.nodes[stages[idx].node].max_element_bytes);
    k.shared_bytes = 0;
    for (int idx : k.stages) {
        if (stages[idx].location != ComputeLocation::Block || stages[idx].stage != 0) continue;
        const Node &node = dag.nodes[stages[idx].node];
        k.shared_bytes += padded_region_points(realization_region[stages[idx].node],
                                               shared_storage_alignment(node, k.widest_shared_element),
                                               decisions.funcs[stages[idx].node].pad_shared) *
                          node.bytes_per_point;
    }
}

void LoopNest::tile_root(int n, int si, ScheduledStage &ss, Kernel &k) {
    const Stage &st = dag.nodes[n].stages[si];
    const FuncDecision &fd = decisions.funcs[n];
    const StageTiling *t = fd.tiled && static_cast<size_t>(si) < fd.stages.size() ? &fd.stages[si] : nullptr;
    k.num_blocks = tile_root_stage(st, ss.loops_realization, t, ss.serial, ss.thread, ss.block);
    ss.loops_block = ss.loops_realization;
    for (size_t i = 0; i < ss.loops_block.size(); i++)
        if (st.tileable(i))
            ss.loops_block[i] =
                tile_at(ss.loops_realization[i], ss.serial[i] * ss.thread[i], ss.block[i] / 2);
    ss.threads = assign_thread_slots(st, ss.thread, ss.thread_slot, ss.thread_shape);
    ss.loops_thread = ss.loops_block;
    for (size_t i = 0; i < ss.serial.size(); i++)
        ss.loops_thread[i] = tile_at(ss.loops_block[i], ss.serial[i], ss.thread[i] / 2);
    ss.num_realizations = 1;
    k.block_shape = ss.thread_shape;
    k.threads_per_block = k.block_shape[0] * k.block_shape[1] * k.block_shape[2];
    if (si == 0) block_region[n] = written(st, ss.loops_block);
}

bool LoopNest::retile_root_stage(int n, int si) {
    const int idx = stage_at[n].size() > static_cast<size_t>(si) ? stage_at[n][si] : -1;
    // Only a kernel of this stage alone: a Func fused into it (its region
    // depends on the tile) takes the whole build.
    if (idx < 0 || stages[idx].location != ComputeLocation::Root ||
        decisions.funcs[n].location != ComputeLocation::Root ||
        kernels[stages[idx].kernel].stages.size() != 1) {
        rebuild();
        return false;
    }
    base_.current = false;
    checkpoints_current_ = false;
    ScheduledStage &ss = stages[idx];
    Kernel &k = kernels[ss.kernel];
    tile_root(n, si, ss, k);
    count_shared_memory(k);
    loops_made_ = false; // its three loops' extents changed
    return true;
}

void LoopNest::rebuild() {
    base_.current = false;
    checkpoints_current_ = false;
    begin_build();
    build_funcs(0, dag.nodes.size());
    end_build();
}

void LoopNest::rebuild_keeping_base(int n) {
    const size_t n_nodes = dag.nodes.size(), at = static_cast<size_t>(n);
    // The Funcs before n this build shares with the last one's base (the
    // previous parent's, at the same step): what they made is kept.
    size_t m = 0;
    if (checkpoints_current_ && base_.node == n && base_.decisions.funcs.size() == n_nodes &&
        checkpoints_.size() > at)
        while (m < at && decisions.funcs[m] == base_.decisions.funcs[m])
            m++;
    if (m > 0)
        take_back_to(m);
    else
        begin_build();
    record_until_ = n;
    build_funcs(m, at);
    // Building n only appends its stages (and a root Func's kernels) and
    // grows its host kernel: what it found is kept to take that back.
    base_.node = n;
    base_.decisions = decisions;
    base_.decisions.funcs[at] = FuncDecision{};
    base_.stages = stages.size();
    base_.kernels.resize(kernels.size());
    for (size_t k = 0; k < kernels.size(); k++)
        base_.kernels[k] = {kernels[k].block_shape, kernels[k].stages.size()};
    build_funcs(at, n_nodes); // records the checkpoint at n, the base's
    record_until_ = -1;
    end_build();
    base_.current = true;
    checkpoints_current_ = true;
}

void LoopNest::record_checkpoint(size_t ni) {
    checkpoints_.resize(ni);
    const size_t parts = ni == 0 ? 0 : checkpoints_[ni - 1].parts + checkpoints_[ni - 1].kernels;
    checkpoints_.push_back({stages.size(), kernels.size(), parts});
    checkpoint_parts_.resize(parts);
    for (const Kernel &k : kernels)
        checkpoint_parts_.push_back({k.block_shape, k.stages.size()});
}

void LoopNest::take_back_to(size_t m) {
    const Checkpoint cp = checkpoints_[m];
    take_back(cp.stages, checkpoint_parts_.data() + cp.parts, cp.kernels, m, dag.nodes.size());
}

void LoopNest::take_back(size_t n_stages, const Base::KernelPart *parts, size_t n_kernels, size_t first,
                         size_t last) {
    while (stages.size() > n_stages) {
        spare_stages_.push_back(std::move(stages.back()));
        stages.pop_back();
    }
    while (kernels.size() > n_kernels) {
        spare_kernels_.push_back(std::move(kernels.back()));
        kernels.pop_back();
    }
    for (size_t k = 0; k < kernels.size(); k++) {
        kernels[k].block_shape = parts[k].block_shape;
        kernels[k].stages.resize(parts[k].stages);
    }
    for (size_t i = first; i < last; i++) {
        stage_at[i].clear();
        realization_region[i].clear();
        block_region[i].clear();
        realizations[i] = 0;
        kernel_of_node_[i] = -1;
        const uint64_t bit = uint64_t(1) << (i % 64);
        if (decisions.funcs[i].location == ComputeLocation::Inline)
            inlined_words_[i / 64] |= bit;
        else
            inlined_words_[i / 64] &= ~bit;
    }
}

bool LoopNest::rebuild_adding(int n) {
    const size_t n_nodes = dag.nodes.size(), at = static_cast<size_t>(n);
    bool such = base_.current && base_.node == n && base_.decisions.funcs.size() == n_nodes;
    for (size_t m = 0; such && m < n_nodes; m++) {
        if (m > at)
            such = decisions.funcs[m].location == ComputeLocation::Unscheduled &&
                   base_.decisions.funcs[m].location == ComputeLocation::Unscheduled;
        else if (m < at)
            such = decisions.funcs[m] == base_.decisions.funcs[m];
    }
    if (!such) {
        rebuild();
        return false;
    }
    // The last build is the base with n added: take n back out.
    take_back(base_.stages, base_.kernels.data(), base_.kernels.size(), at, at + 1);
    build_funcs(at, n_nodes);
    end_build();
    base_.current = true;
    return true;
}

void LoopNest::begin_build() {
    const Decisions &d = decisions;
    const size_t n_nodes = dag.nodes.size();
    assert(d.funcs.size() == n_nodes && "decisions must have one entry per Func");
    // Keep the previous build's parts for their capacity (every field that
    // matters is assigned again below before it is read).
    for (ScheduledStage &ss : stages)
        spare_stages_.push_back(std::move(ss));
    stages.clear();
    for (Kernel &k : kernels)
        spare_kernels_.push_back(std::move(k));
    kernels.clear();
    stage_at.resize(n_nodes);
    realization_region.resize(n_nodes);
    block_region.resize(n_nodes);
    for (size_t i = 0; i < n_nodes; i++) {
        stage_at[i].clear();
        realization_region[i].clear();
        block_region[i].clear();
    }
    realizations.assign(n_nodes, 0);
    // Which Funcs are inlined, 64 to a word: part of most memo keys, which
    // take a range of it (append_inlined_bits).
    inlined_words_.assign(n_nodes / 64 + 1, 0);
    for (size_t c = 0; c < n_nodes; c++)
        if (d.funcs[c].location == ComputeLocation::Inline) inlined_words_[c / 64] |= uint64_t(1) << (c % 64);
    // The kernel of a root Func's last stage: the loops Halide's compute_at
    // names are its last stage's, so a Func at its Block level is computed
    // there (for a Func with updates: a split's partials combined in block).
    std::vector<int> &kernel_of_node = kernel_of_node_;
    kernel_of_node.assign(n_nodes, -1);
}

void LoopNest::build_funcs(size_t first, size_t last) {
    const Decisions &d = decisions;
    const size_t n_nodes = dag.nodes.size();
    std::vector<int> &kernel_of_node = kernel_of_node_;
    auto new_stage = [&](int n, int si, ComputeLocation loc, size_t nl) {
        ScheduledStage ss = take(spare_stages_);
        ss.node = n;
        ss.stage = si;
        ss.location = loc;
        ss.kernel = -1;
        ss.serial.assign(nl, 1);
        ss.thread.assign(nl, 1);
        ss.block.assign(nl, 1);
        ss.num_realizations = 1;
        ss.threads = 1;
        ss.thread_shape = {1, 1, 1};
        ss.thread_slot.clear();
        return ss;
    };
    auto middle_thread_tile = [](ScheduledStage &ss) {
        ss.loops_thread = ss.loops_block;
        for (size_t i = 0; i < ss.serial.size(); i++) {
            ss.loops_thread[i] = tile_at(ss.loops_block[i], ss.serial[i], ss.thread[i] / 2);
        }
    };
    auto assign_slots = [](ScheduledStage &ss, const Stage &st) {
        ss.threads = assign_thread_slots(st, ss.thread, ss.thread_slot, ss.thread_shape);
    };
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
    std::vector<Region> shifted[2];
    std::vector<uint8_t> shifted_done[2];
    for (int side = 0; side < 2; side++) {
        shift_base_done_[side].clear(); // sized on first use in this build
        if (shift_base_[side].size() < n_nodes) shift_base_[side].resize(n_nodes);
    }
    std::function<const Region &(int, int, bool, int64_t)> region_at_shift;
    // Visits the stages that may read node n per block of `kernel` (per
    // thread of n's host, for Thread level): those of the Funcs above n in
    // the kernel, the host's and its other Thread-level Funcs' per thread.
    // `tile_moves`: the stage is the tile that moves (the kernel's root
    // stage per block, the host per thread); the others move with their own
    // regions. Both the region walks and their shapes go through here.
    auto for_each_reader = [&](int n, int kernel, bool per_thread, auto &&visit) {
        for (int c = 0; c < n; c++) {
            for (int idx : stage_at[c]) {
                if (idx < 0 || stages[idx].kernel != kernel) continue;
                const ScheduledStage &ss = stages[idx];
                const bool host_thread =
                    per_thread && (c == d.funcs[n].host || (location(c) == ComputeLocation::Thread &&
                                                            d.funcs[c].host == d.funcs[n].host));
                if (per_thread && !host_thread) continue;
                const bool tile_moves =
                    per_thread ? c == d.funcs[n].host : location(c) == ComputeLocation::Root;
                visit(c, ss, dag.nodes[c].stages[ss.stage], tile_moves);
            }
        }
    };
    auto consumers_in_kernel = [&](int n, int kernel, bool per_thread, int64_t shift) {
        // The producer's region: union of what the consumers in this kernel
        // need per block (or per thread of the host, for Thread level).
        Region r;
        std::vector<Span> moved;
        for_each_reader(n, kernel, per_thread,
                        [&](int c, const ScheduledStage &ss, const Stage &st, bool tile_moves) {
                            if (shift > 0 && !tile_moves) {
                                // Its region at this shift, sized as the nest sizes it
                                // (by its largest extent, where it is sized by its max).
                                Region rc = region_at_shift(c, kernel, per_thread, shift);
                                const Region &sized = per_thread ? realization_region[c] : block_region[c];
                                if (sized_by_max(dag.nodes[c])) {
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
                            const auto dm = demand(st, moved);
                            auto it = dm->find(ProducerRef{n, false});
                            if (it != dm->end()) merge_region(r, it->second);
                        });
        return r;
    };
    region_at_shift = [&](int n, int kernel, bool per_thread, int64_t shift) -> const Region & {
        const int side = per_thread ? 1 : 0;
        if (shifted[side].empty()) {
            shifted[side].resize(n_nodes * kResidues);
            shifted_done[side].assign(n_nodes * kResidues, 0);
        }
        const size_t key = static_cast<size_t>(n) * kResidues + static_cast<size_t>(shift);
        if (!shifted_done[side][key]) {
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
                if (shift_base_done_[side].empty()) shift_base_done_[side].assign(n_nodes, 0);
                std::vector<int64_t> &base = shift_base_[side][n];
                if (!shift_base_done_[side][n]) {
                    below_root_key(n, kernel, per_thread, base);
                    shift_base_done_[side][n] = 1;
                }
                shift_key_.clear();
                shift_key_.push_back(-shift);
                shift_key_.insert(shift_key_.end(), base.begin(), base.end());
                return shift_key_;
            };
            const Region *known = memo_ ? memo_->find(make_shift_key()) : nullptr;
            if (known) {
                shifted[side][key] = *known;
            } else {
                Region r = consumers_in_kernel(n, kernel, per_thread, shift);
                if (!r.empty()) dag.grow_by_updates(n, r);
                if (memo_) memo_->insert(make_shift_key(), r);
                shifted[side][key] = std::move(r);
            }
            shifted_done[side][key] = 1;
        }
        return shifted[side][key];
    };
    // The shape of node n's region as the tile moves (core/shift_shape.h),
    // followed the way region_at_shift computes the region at a shift: the
    // consumers in the kernel (the tile's own stages moved, the others at
    // their own shapes, sized by their largest extent where the nest sizes
    // them so), what each demands through inlined Funcs, the updates'
    // growth. Made once per side and Func in this build.
    std::vector<RegionShape> shapes[2];
    std::vector<uint8_t> shapes_done[2];
    auto demand_shape = [&](const Stage &st, const std::vector<SpanShape> &loops, int target) {
        RegionShape out;
        std::map<int, RegionShape> pending; // inlined Funcs, as demand_walk expands them
        auto expand = [&](const Stage &s, const std::vector<SpanShape> &lb) {
            for (const Edge &e : s.edges) {
                if (e.producer.is_image) continue;
                const int p = e.producer.index;
                const bool inlined = location(p) == ComputeLocation::Inline;
                if (inlined || p == target) merge_shape(inlined ? pending[p] : out, required_shape(e, lb));
            }
        };
        expand(st, loops);
        std::vector<SpanShape> lb;
        drain_in_dag_order(pending, [&](int node, const RegionShape &region) {
            const Stage &ps = dag.nodes[node].stages[0];
            loop_shapes_into(ps, region, lb);
            expand(ps, lb);
        });
        return out;
    };
    std::function<const RegionShape &(int, int, bool)> shape_at_shift;
    shape_at_shift = [&](int n, int kernel, bool per_thread) -> const RegionShape & {
        const int side = per_thread ? 1 : 0;
        if (shapes[side].empty()) {
            shapes[side].resize(n_nodes);
            shapes_done[side].assign(n_nodes, 0);
        }
        if (!shapes_done[side][n]) {
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
                for_each_reader(n, kernel, per_thread,
                                [&](int c, const ScheduledStage &, const Stage &st, bool tile_moves) {
                                    // Only a stage that reads n, or an inlined Func, can demand n.
                                    const bool may_read =
                                        std::any_of(st.edges.begin(), st.edges.end(), [&](const Edge &e) {
                                            return !e.producer.is_image &&
                                                   (e.producer.index == n ||
                                                    location(e.producer.index) == ComputeLocation::Inline);
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
            shapes[side][n] = std::move(r);
            shapes_done[side][n] = 1;
        }
        return shapes[side][n];
    };
    // What the shape says of node n's extent, remembered across builds by
    // what the shape is made from: the kernel, n's host, and per Func above
    // n its location, which of its stages are in the kernel and whether it
    // shares n's host (the tiles' sizes do not enter it; most region misses
    // differ from an earlier build only in those).
    auto shift_verdict = [&](int n, int kernel, bool per_thread) {
        std::vector<int64_t> &key = verdict_key_;
        key.clear();
        key.push_back(n);
        key.push_back(per_thread ? 1 : 0);
        key.push_back(kernels[kernel].node);
        key.push_back(kernels[kernel].stage);
        key.push_back(per_thread ? d.funcs[n].host : -1);
        for (int c = 0; c < n; c++) {
            key.push_back(static_cast<int64_t>(location(c)) | (d.funcs[c].host == d.funcs[n].host ? 8 : 0));
            uint64_t in_kernel = 0; // which of c's stages, 64 to a word
            for (size_t si = 0; si < stage_at[c].size(); si++) {
                const int idx = stage_at[c][si];
                if (idx >= 0 && stages[idx].kernel == kernel) in_kernel |= uint64_t(1) << (si % 64);
                if (si % 64 == 63 || si + 1 == stage_at[c].size()) {
                    key.push_back(static_cast<int64_t>(in_kernel));
                    in_kernel = 0;
                }
            }
        }
        if (auto known = shift_verdicts_.find(key); known != shift_verdicts_.end()) return known->second;
        const ShiftWalks w = shift_walks(shape_at_shift(n, kernel, per_thread), kResidues);
        const size_t bytes = key.size() * sizeof(int64_t) + 64; // key, walks, hash node
        if (shift_verdict_bytes_ + bytes > kMaxShiftVerdictBytes) {
            shift_verdicts_.clear();
            shift_verdict_bytes_ = 0;
        }
        shift_verdicts_.emplace(key, w);
        shift_verdict_bytes_ += bytes;
        return w;
    };
    // The producer's region per block (per thread), grown by what its
    // updates touch; where it can change extent as the tile moves
    // (sized_by_max), each extent is the largest over every residue of the
    // tile's start, which schedule_apply fixes with bound_extent: Halide
    // sees that start as a free symbol and otherwise sizes the threads and
    // shared memory at run time (a pyramid's upsampling levels, issue 12).
    // A region comes from the memo when an earlier build had the same key
    // (most do: a search step changes one Func).
    auto region_below_root = [&](int n, int kernel, bool per_thread) {
        if (memo_) {
            below_root_key(n, kernel, per_thread, key_);
            if (const Region *known = memo_->find(key_)) return *known;
        }
        Region r = consumers_in_kernel(n, kernel, per_thread, 0);
        if (!r.empty()) dag.grow_by_updates(n, r);
        // Every shift is walked unless the region's shape says which give
        // its largest extents (core/shift_shape.h): one period of a
        // repeating extent, the last shift too where one is convex.
        const bool walk = !r.empty() && sized_by_max(dag.nodes[n]);
        ShiftWalks walks;
        if (walk && tile_starts_ == TileStarts::WhereShapeAllows)
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
            shift_walks_saved += (kResidues - 1) - until - (last ? 1 : 0);
        }
        if (memo_) memo_->insert(key_, r);
        return r;
    };

    for (size_t ni = first; ni < last; ni++) {
        if (static_cast<int64_t>(ni) <= record_until_) record_checkpoint(ni);
        const Node &node = dag.nodes[ni];
        const FuncDecision &fd = d.funcs[ni];
        stage_at[ni].assign(node.stages.size(), -1);
        if (fd.location == ComputeLocation::Unscheduled || fd.location == ComputeLocation::Inline) continue;
        const int n = static_cast<int>(ni);

        if (fd.location == ComputeLocation::Root) {
            realization_region[ni] = node.region;
            realizations[ni] = 1;
            for (size_t si = 0; si < node.stages.size(); si++) {
                const Stage &st = node.stages[si];
                size_t nl = st.loops.size();
                ScheduledStage ss = new_stage(n, static_cast<int>(si), fd.location, nl);
                loop_bounds_into(st, node.region, ss.loops_realization);
                Kernel k = take(spare_kernels_);
                k.node = n;
                k.stage = static_cast<int>(si);
                k.shared_bytes = 0;
                k.stages.clear();
                tile_root(n, static_cast<int>(si), ss, k);
                ss.kernel = static_cast<int>(kernels.size());
                kernel_of_node[ni] = ss.kernel;
                k.stages.push_back(static_cast<int>(stages.size()));
                kernels.push_back(std::move(k));
                stage_at[ni][si] = static_cast<int>(stages.size());
                stages.push_back(std::move(ss));
            }
            continue;
        }

        if (fd.location == ComputeLocation::Block) {
            int kernel = kernel_of_node[fd.host];
            assert(kernel >= 0 && "a Block-level Func's host must be a root Func scheduled before it");
            Region r = region_below_root(n, kernel, false);
            if (r.empty()) r = node.region; // no consumer found: be conservative
            realization_region[ni] = r;
            block_region[ni] = r;
            realizations[ni] = kernels[kernel].num_blocks;
            for (size_t si = 0; si < node.stages.size(); si++) {
                const Stage &st = node.stages[si];
                size_t nl = st.loops.size();
                ScheduledStage ss = new_stage(n, static_cast<int>(si), fd.location, nl);
                ss.kernel = kernel;
                loop_bounds_into(st, r, ss.loops_realization);
                ss.loops_block = ss.loops_realization;
                int pure_seen = 0;
                for (size_t i = 0; i < nl; i++) {
                    int64_t ext = ss.loops_realization[i].extent();
                    if (st.loops[i].is_rvar) {
                        ss.serial[i] = ext;
                        continue;
                    }
                    // Only three loops can be gpu_threads; the rest run serially.
                    if (pure_seen++ >= 3) {
                        ss.serial[i] = ext;
                        continue;
                    }
                    int64_t s = si < fd.stages.size() && i < fd.stages[si].serial.size()
                                    ? fd.stages[si].serial[i]
                                    : 1;
                    ss.serial[i] = std::max<int64_t>(1, std::min(ext, s));
                    ss.thread[i] = ceil_div(ext, ss.serial[i]);
                }
                assign_slots(ss, st);
                middle_thread_tile(ss);
                ss.num_realizations = realizations[ni];
                Kernel &k = kernels[kernel];
                for (int q = 0; q < 3; q++)
                    k.block_shape[q] = std::max(k.block_shape[q], ss.thread_shape[q]);
                k.stages.push_back(static_cast<int>(stages.size()));
                stage_at[ni][si] = static_cast<int>(stages.size());
                stages.push_back(std::move(ss));
            }
            continue;
        }

        // Thread level: computed serially by each thread of the host stage.
        int host_idx = stage_at[fd.host].empty() ? -1 : stage_at[fd.host][0];
        assert(host_idx >= 0 && "a Thread-level Func's host must be scheduled before it");
        // Copies, not a reference: `stages` grows below.
        const int kernel = stages[host_idx].kernel;
        const int64_t host_threads = stages[host_idx].threads;
        const std::array<int64_t, 3> host_shape = stages[host_idx].thread_shape;
        Region r = region_below_root(n, kernel, true);
        if (r.empty()) r = node.region;
        Region rb = region_below_root(n, kernel, false);
        if (rb.empty()) rb = r;
        realization_region[ni] = r;
        block_region[ni] = rb;
        realizations[ni] = kernels[kernel].num_blocks * host_threads;
        for (size_t si = 0; si < node.stages.size(); si++) {
            const Stage &st = node.stages[si];
            size_t nl = st.loops.size();
            ScheduledStage ss = new_stage(n, static_cast<int>(si), fd.location, nl);
            ss.kernel = kernel;
            loop_bounds_into(st, r, ss.loops_realization);
            loop_bounds_into(st, rb, ss.loops_block);
            ss.loops_thread = ss.loops_realization;
            for (size_t i = 0; i < nl; i++)
                ss.serial[i] = ss.loops_realization[i].extent();
            ss.thread_slot.assign(nl, -1);
            ss.thread_shape = host_shape;
            ss.threads = host_threads;
            ss.num_realizations = realizations[ni];
            kernels[kernel].stages.push_back(static_cast<int>(stages.size()));
            stage_at[ni][si] = static_cast<int>(stages.size());
            stages.push_back(std::move(ss));
        }
    }
}

void LoopNest::end_build() {
    for (Kernel &k : kernels) {
        k.threads_per_block = k.block_shape[0] * k.block_shape[1] * k.block_shape[2];
        count_shared_memory(k);
    }
    loops_made_ = false;
}

const std::vector<LoopNode> &LoopNest::loops() const {
    if (!loops_made_) make_loop_tree();
    return loops_;
}

void LoopNest::make_loop_tree() const {
    const Decisions &d = decisions;
    std::vector<LoopNode> &loops = loops_;
    for (LoopNode &ln : loops)
        spare_loops_.push_back(std::move(ln));
    loops.clear();
    // Children in realization order: larger node index = producer.
    auto add = [&](int parent, LoopKind kind, const ScheduledStage &ss, const std::vector<int64_t> &ext) {
        LoopNode ln = take(spare_loops_);
        ln.kind = kind;
        ln.node = ss.node;
        ln.stage = ss.stage;
        ln.extent = ext;
        ln.parent = parent;
        ln.children.clear();
        ln.stored.clear();
        loops.push_back(std::move(ln));
        int id = static_cast<int>(loops.size()) - 1;
        loops[parent].children.push_back(id);
        return id;
    };
    {
        LoopNode root = take(spare_loops_);
        root.kind = LoopKind::Root;
        root.node = root.stage = root.parent = -1;
        root.extent.clear();
        root.children.clear();
        root.stored.clear();
        loops.push_back(std::move(root));
    }
    std::vector<int> &thread_node_of_stage = thread_node_of_stage_;
    thread_node_of_stage.assign(stages.size(), -1);
    std::vector<int> &kernel_block_node = kernel_block_node_;
    kernel_block_node.assign(kernels.size(), -1);
    // Stages were created consumers first; walk them producers first.
    const int num_stages = static_cast<int>(stages.size());
    for (int i = num_stages - 1; i >= 0; i--) {
        const ScheduledStage &ss = stages[i];
        if (ss.location != ComputeLocation::Root) continue;
        int b = add(0, LoopKind::Block, ss, ss.block);
        kernel_block_node[ss.kernel] = b;
        int t = add(b, LoopKind::Thread, ss, ss.thread);
        thread_node_of_stage[i] = t;
        add(t, LoopKind::Serial, ss, ss.serial);
        if (ss.stage == 0) loops[0].stored.push_back(ss.node);
    }
    for (int i = num_stages - 1; i >= 0; i--) {
        const ScheduledStage &ss = stages[i];
        if (ss.location != ComputeLocation::Block) continue;
        int b = kernel_block_node[ss.kernel];
        int t = add(b, LoopKind::Thread, ss, ss.thread);
        thread_node_of_stage[i] = t;
        add(t, LoopKind::Serial, ss, ss.serial);
        if (ss.stage == 0) loops[b].stored.push_back(ss.node);
    }
    for (int i = num_stages - 1; i >= 0; i--) {
        const ScheduledStage &ss = stages[i];
        if (ss.location != ComputeLocation::Thread) continue;
        int host_stage = stage_at[d.funcs[ss.node].host][0];
        int t = thread_node_of_stage[host_stage];
        if (t < 0) continue;
        add(t, LoopKind::Serial, ss, ss.serial);
        if (ss.stage == 0) loops[t].stored.push_back(ss.node);
    }
    // (node, stage) pairs are distinct among a node's children, so this
    // order is total and std::sort (no temporary buffer, unlike
    // std::stable_sort) gives the same result.
    for (LoopNode &ln : loops) {
        std::sort(ln.children.begin(), ln.children.end(), [&](int a, int b) {
            if (loops[a].node != loops[b].node) return loops[a].node > loops[b].node;
            return loops[a].stage < loops[b].stage;
        });
    }
    loops_made_ = true;
}

} // namespace gpusched
