#include "core/memory_transactions.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "core/storage_layout.h"
#include "core/thread_scratch.h"
#include "core/words_hash.h"

namespace gpusched {

namespace detail {

int64_t global_transactions(const std::vector<int64_t> &addresses, int bytes, TransactionBuffers &buffers) {
    // Global loads and stores are served in 32-byte sectors: count the
    // distinct ones. A warp's lanes mostly touch them in order, so the sort
    // is skipped when they already are.
    std::vector<int64_t> &sectors = buffers.units;
    sectors.clear();
    for (int64_t a : addresses) {
        int64_t first = (a * bytes) >> 5, last = (a * bytes + bytes - 1) >> 5;
        for (int64_t s = first; s <= last; s++)
            sectors.push_back(s);
    }
    if (!std::is_sorted(sectors.begin(), sectors.end())) std::sort(sectors.begin(), sectors.end());
    int64_t distinct = 0;
    for (size_t i = 0; i < sectors.size(); i++)
        distinct += i == 0 || sectors[i] != sectors[i - 1] ? 1 : 0;
    return distinct;
}

int64_t shared_transactions(const std::vector<int64_t> &addresses, int bytes, int banks,
                            TransactionBuffers &buffers) {
    // Shared memory has `banks` 4-byte banks; lanes reading the same word are
    // served together (broadcast), distinct words in one bank serialize: the
    // degree is the most distinct words any bank serves.
    if (addresses.empty()) return 0;
    std::vector<int64_t> &words = buffers.units;
    words.clear();
    for (int64_t a : addresses) {
        int64_t first = (a * bytes) >> 2, last = (a * bytes + bytes - 1) >> 2;
        for (int64_t w = first; w <= last; w++)
            words.push_back(w);
    }
    if (!std::is_sorted(words.begin(), words.end())) std::sort(words.begin(), words.end());
    std::vector<int64_t> &in_bank = buffers.words_in_bank;
    in_bank.assign(static_cast<size_t>(std::max(1, banks)), 0);
    int64_t worst = 1;
    for (size_t i = 0; i < words.size(); i++) {
        if (i > 0 && words[i] == words[i - 1]) continue;
        const int64_t bank = ((words[i] % banks) + banks) % banks;
        worst = std::max(worst, ++in_bank[static_cast<size_t>(bank)]);
    }
    return worst;
}

} // namespace detail

namespace {

// The next lane's coordinates in a block of shape[0] x shape[1] x any.
inline void next_lane(int64_t (&c)[3], const std::array<int64_t, 3> &shape) {
    if (++c[0] < shape[0]) return;
    c[0] = 0;
    if (++c[1] < shape[1]) return;
    c[1] = 0;
    ++c[2];
}

} // namespace

void make_lanes(Lanes &L, const LoopNest &nest, const ScheduledStage &ss, const Stage &st, int warp_size) {
    const Kernel &k = nest.kernels[ss.kernel];
    L.active_warps = L.active_threads = 0;
    L.regular_warp = L.tail_warp = -1;
    const int64_t T = std::max<int64_t>(1, k.threads_per_block);
    L.warps = (T + warp_size - 1) / warp_size;
    L.loops = st.loops.size();
    // For a Thread-level stage every thread of its host runs it; the lane's
    // point moves with the host's tiling along the same Func argument
    // (approximation: assumes producer and consumer dimensions line up).
    const ScheduledStage *host = nullptr;
    if (ss.location == ComputeLocation::Thread) {
        int hidx = nest.stage_at[nest.decisions.funcs[ss.node].host][0];
        host = &nest.stages[hidx];
    }
    const ScheduledStage &shape_src = host ? *host : ss;
    const Stage &shape_stage = host ? nest.dag.nodes[host->node].stages[host->stage] : st;
    auto is_active = [&](const int64_t(&c)[3]) {
        return c[0] < shape_src.thread_shape[0] && c[1] < shape_src.thread_shape[1] &&
               c[2] < shape_src.thread_shape[2];
    };
    // Lane i of the block is at (i % x, i / x % y, i / (x * y)); a warp's
    // active lanes are counted from the block's shape, not lane by lane.
    const int64_t x = std::max<int64_t>(1, k.block_shape[0]), y = std::max<int64_t>(1, k.block_shape[1]);
    auto place = [&](int64_t lane, int64_t(&c)[3]) {
        c[0] = lane % x;
        c[1] = lane / x % y;
        c[2] = lane / (x * y);
    };
    const int64_t active_in_row = std::min(x, shape_src.thread_shape[0]);
    const int64_t active_in_plane = active_in_row * std::min(y, shape_src.thread_shape[1]);
    auto active_before = [&](int64_t lane) { // active lanes among the first `lane`
        int64_t c[3];
        place(lane, c);
        int64_t n = std::min(c[2], shape_src.thread_shape[2]) * active_in_plane;
        if (c[2] < shape_src.thread_shape[2]) {
            n += std::min(c[1], shape_src.thread_shape[1]) * active_in_row;
            if (c[1] < shape_src.thread_shape[1]) n += std::min(c[0], shape_src.thread_shape[0]);
        }
        return n;
    };
    int64_t regular_count = 0, tail_count = 0;
    for (int64_t w = 0, before = 0; w < L.warps; w++) {
        const int64_t after = active_before(std::min(T, (w + 1) * warp_size)), count = after - before;
        before = after;
        if (!count) continue;
        L.active_warps++;
        L.active_threads += count;
        if (L.regular_warp < 0) {
            L.regular_warp = static_cast<int>(w);
            regular_count = count;
        }
        L.tail_warp = static_cast<int>(w);
        tail_count = count;
    }
    // The tail warp is only different if it has a different number of
    // active lanes than the representative regular warp.
    if (L.tail_warp == L.regular_warp || tail_count == regular_count) L.tail_warp = -1;

    const int kept_warps[2] = {L.regular_warp, L.tail_warp};
    for (int kept = 0; kept < 2; kept++) {
        std::vector<int64_t> &lanes = L.lanes[kept], &columns = L.columns[kept];
        lanes.clear();
        if (kept_warps[kept] < 0) {
            columns.clear();
            continue;
        }
        const int64_t lo = static_cast<int64_t>(kept_warps[kept]) * warp_size;
        const int64_t n = std::min<int64_t>(warp_size, T - lo);
        int64_t c[3];
        place(lo, c);
        for (int64_t i = 0; i < n; i++, next_lane(c, k.block_shape))
            if (is_active(c)) lanes.push_back(i);
        const size_t m = lanes.size();
        columns.assign(m * L.loops, 0);
        place(lo, c);
        for (int64_t i = 0, j = 0; i < n; i++, next_lane(c, k.block_shape)) {
            if (!is_active(c)) continue;
            for (size_t l = 0; l < st.loops.size(); l++) {
                int64_t &coord = columns[l * m + static_cast<size_t>(j)];
                if (!host) {
                    int slot = ss.thread_slot[l];
                    if (slot >= 0) coord = c[slot] * ss.serial[l];
                } else if (!st.loops[l].is_rvar) {
                    for (size_t h = 0; h < shape_stage.loops.size(); h++) {
                        int slot = host->thread_slot[h];
                        if (slot >= 0 && shape_stage.loops[h].func_arg == st.loops[l].func_arg)
                            coord = c[slot] * host->serial[h];
                    }
                }
            }
            j++;
        }
    }
}

namespace {

// One warp's transactions over an access's serial points, by everything
// they are counted from: the memory level, element bytes, banks, how many
// serial points are enumerated, each dependent serial loop's address step
// and extent, then every active lane's base address. A kernel missing the
// feature memo (its key changed: a Func placed in it, a producer moved)
// has every stage featurized again, though most of their access patterns
// are unchanged; they are found here. The count is a sum of integer
// counts, exact in a double, so a found one is the one computed. Bounded:
// emptied when it holds kMaxEntries (keys are plain data, valid for any
// pipeline, so it is kept across searches).
class WarpTransactionMemo {
public:
    static constexpr size_t kMaxEntries = 1 << 14;
    std::vector<int64_t> key;
    const double *find() const {
        auto it = counts_.find(key);
        return it == counts_.end() ? nullptr : &it->second;
    }
    void insert(double tx) {
        if (counts_.size() >= kMaxEntries) counts_.clear();
        counts_.emplace(key, tx);
    }

private:
    std::unordered_map<std::vector<int64_t>, double, WordsHash> counts_;
};

// access_transactions' buffers, kept between calls.
struct TransactionScratch {
    std::vector<int64_t> strides, loop_stride, addrs, point;
    std::vector<int> dep;
    detail::TransactionBuffers buffers;
    WarpTransactionMemo memo;
};

// Transactions per block of one access (or store) pattern.
// scratch: kept between calls (this runs for every access pattern of every
// stage featurized); the caller looks up its thread's once per stage.
// innermost: the dimension the allocation stores innermost (LoopNest::
// storage_innermost); the others follow in their order. padding: the
// elements it stores beyond its innermost extent (LoopNest::storage_padding).
MemStats access_transactions(TransactionScratch &scratch, const Lanes &L, const ScheduledStage &ss,
                             const Stage &st, const Jacobian &jac, const Region &alloc, int innermost,
                             int64_t padding, int bytes, MemoryLevel level, int warp_size, int banks) {
    MemStats m;
    if (level == MemoryLevel::Register || L.regular_warp < 0) return m;
    std::vector<int64_t> &strides = scratch.strides;
    storage_strides(alloc, jac.size(), innermost, padding, strides);
    // Serial loops the address depends on; loads independent of a serial
    // loop are hoisted out of its unrolled body and issued once.
    std::vector<int> &dep = scratch.dep;
    dep.clear();
    double rvar_repeat = 1;
    for (size_t l = 0; l < st.loops.size(); l++) {
        bool depends = false;
        for (const auto &row : jac) {
            depends = depends || !row[l] || *row[l] != 0;
        }
        if (!depends || ss.serial[l] <= 1) continue;
        // RVars run long serial loops that are not unrolled; every iteration
        // looks like the first (translation invariance).
        if (st.loops[l].is_rvar)
            rvar_repeat *= static_cast<double>(ss.serial[l]);
        else
            dep.push_back(static_cast<int>(l));
    }
    int64_t combos = 1;
    for (int l : dep)
        combos *= ss.serial[l];
    // Enumerate at most kMaxCombos serial points and scale the rest (only
    // Thread-level stages with large regions get there).
    constexpr int64_t kMaxCombos = 64;
    int64_t enumerated = std::min(combos, kMaxCombos);
    double scale = static_cast<double>(combos) / static_cast<double>(enumerated) * rvar_repeat;

    // The address is linear in the lane's point: precompute each active
    // lane's base address and each loop's address stride, then every serial
    // point is a translation. Data-dependent indices: assume the worst,
    // every lane apart (its own sector; the same shared bank).
    bool known = true;
    std::vector<int64_t> &loop_stride = scratch.loop_stride;
    loop_stride.assign(st.loops.size(), 0);
    for (size_t l = 0; l < st.loops.size(); l++) {
        for (size_t i = 0; i < jac.size(); i++) {
            if (!jac[i][l])
                known = false;
            else
                loop_stride[l] += *jac[i][l] * strides[i];
        }
    }
    // Moving every lane's address by whole 32-byte sectors (global) or
    // 4-byte words (shared) leaves the count unchanged (the sectors move
    // alike; the banks are a rotation), so a serial point's count depends
    // only on its offset in bytes modulo that unit: each residue is counted
    // once per warp.
    const int64_t unit_mask = level == MemoryLevel::Global ? 31 : 3;
    auto warp_tx = [&](int kept, double &used) {
        double tx = 0;
        std::vector<int64_t> &addrs = scratch.addrs, &point = scratch.point;
        const std::vector<int64_t> &lanes = L.lanes[kept];
        const size_t m = lanes.size();
        // Each serial point adds the warp's active lanes' bytes.
        used += static_cast<double>(enumerated) * static_cast<double>(m) * bytes;
        // The memo's key, written in place: the header, then every active
        // lane's base address (its first point's).
        std::vector<int64_t> &key = scratch.memo.key;
        const size_t header = 5 + 2 * dep.size();
        key.resize(header + m);
        key[0] = static_cast<int64_t>(level);
        key[1] = bytes;
        key[2] = banks;
        key[3] = enumerated;
        for (size_t q = 0; q < dep.size(); q++) {
            key[4 + 2 * q] = known ? loop_stride[dep[q]] : 0;
            key[5 + 2 * q] = ss.serial[dep[q]];
        }
        key[header - 1] = -1;
        int64_t *base = key.data() + header;
        if (known) {
            std::fill(base, base + m, int64_t(0));
            for (size_t l = 0; l < st.loops.size(); l++) {
                const int64_t stride = loop_stride[l];
                if (stride == 0) continue;
                const int64_t *column = L.columns[kept].data() + l * m;
                for (size_t j = 0; j < m; j++)
                    base[j] += stride * column[j];
            }
        } else {
            const int64_t lo = static_cast<int64_t>(kept == 0 ? L.regular_warp : L.tail_warp) * warp_size;
            for (size_t j = 0; j < m; j++)
                base[j] = (lo + lanes[j]) * 1024 * warp_size;
        }
        if (const double *known_tx = scratch.memo.find()) return *known_tx;
        std::array<int64_t, 32> by_residue;
        by_residue.fill(-1);
        // The serial points in order, the first dependent loop fastest,
        // counted up with the offset kept along (unknown strides: no offset).
        point.assign(dep.size(), 0);
        int64_t offset = 0;
        for (int64_t c = 0; c < enumerated; c++) {
            int64_t &count = by_residue[static_cast<size_t>((offset * bytes) & unit_mask)];
            if (count < 0) {
                addrs.resize(m);
                for (size_t q = 0; q < m; q++)
                    addrs[q] = base[q] + offset;
                count = level == MemoryLevel::Global
                            ? detail::global_transactions(addrs, bytes, scratch.buffers)
                            : detail::shared_transactions(addrs, bytes, banks, scratch.buffers);
            }
            tx += static_cast<double>(count);
            for (size_t q = 0; q < dep.size(); q++) {
                const int l = dep[q];
                const int64_t step = known ? loop_stride[l] : 0;
                if (++point[q] < ss.serial[l]) {
                    offset += step;
                    break;
                }
                point[q] = 0;
                offset -= step * (ss.serial[l] - 1);
            }
        }
        scratch.memo.insert(tx);
        return tx;
    };
    double used_regular = 0, used_tail = 0;
    double regular = warp_tx(0, used_regular);
    double n_regular = static_cast<double>(L.active_warps - (L.tail_warp >= 0 ? 1 : 0));
    m.transactions = regular * n_regular;
    m.bytes_used = used_regular * n_regular;
    if (L.tail_warp >= 0) {
        m.transactions += warp_tx(1, used_tail);
        m.bytes_used += used_tail;
    }
    m.transactions *= scale;
    m.bytes_used *= scale;
    return m;
}

} // namespace

BlockTransactions block_transactions(const LoopNest &nest, const ScheduledStage &ss, const Lanes &L,
                                     const EffectiveAccesses &accesses, const Region &own_alloc,
                                     int own_innermost, MemoryLevel own, int warp_size, int banks) {
    const Node &node = nest.dag.nodes[ss.node];
    const Stage &st = node.stages[ss.stage];
    // This thread's buffers, looked up once per stage (a lookup in a shared
    // library is a call; once per access pattern it was 2% of camera_pipe's
    // search).
    TransactionScratch &tx = thread_scratch<TransactionScratch>();
    BlockTransactions t;
    // Stencil taps of one producer share a jacobian (only their offsets
    // differ, which this analysis ignores): analyse each pattern once.
    std::vector<std::pair<const EffectiveAccess *, MemStats>> seen;
    for (const EffectiveAccess &a : accesses) {
        MemoryLevel lvl = nest.memory_level(a.producer);
        const MemStats *prev = nullptr;
        for (const auto &p : seen) {
            if (p.first->producer == a.producer && p.first->bytes == a.bytes &&
                p.first->jacobian == a.jacobian)
                prev = &p.second;
        }
        MemStats m =
            prev ? *prev
                 : access_transactions(tx, L, ss, st, a.jacobian, nest.allocation(a.producer),
                                       nest.storage_innermost(a.producer), nest.storage_padding(a.producer),
                                       a.bytes, lvl, warp_size, banks);
        if (!prev) seen.emplace_back(&a, m);
        MemStats &acc = lvl == MemoryLevel::Global ? t.global_loads : t.shared_loads;
        acc.transactions += m.transactions * a.count;
        acc.bytes_used += m.bytes_used * a.count;
    }
    for (int v = 0; v < static_cast<int>(node.func.values().size()); v++) {
        int eb = node.func.output_types()[v].bytes();
        MemStats m =
            access_transactions(tx, L, ss, st, st.store_jacobian, own_alloc, own_innermost,
                                nest.storage_padding(ProducerRef{ss.node, false}), eb, own, warp_size, banks);
        MemStats &acc = own == MemoryLevel::Global ? t.global_stores : t.shared_stores;
        acc.transactions += m.transactions;
        acc.bytes_used += m.bytes_used;
    }
    return t;
}

} // namespace gpusched
