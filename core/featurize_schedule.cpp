#include "core/featurize_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "core/memory_transactions.h"
#include "core/thread_scratch.h"

namespace gpusched {

namespace {

double bytes_of(const Region &r, int bytes) {
    return static_cast<double>(region_points(r)) * bytes;
}
// Contiguous runs of a region stored with dimension `innermost` innermost.
double lines_of(const Region &r, int innermost) {
    double l = 1;
    for (size_t i = 0; i < r.size(); i++)
        if (static_cast<int>(i) != innermost) l *= static_cast<double>(std::max<int64_t>(1, r[i].extent()));
    return l;
}
// The extent of that dimension: one contiguous run, in points.
double innermost_points(const Region &r, int innermost) {
    if (r.empty()) return 1;
    const size_t d = static_cast<size_t>(innermost) < r.size() ? static_cast<size_t>(innermost) : 0;
    return static_cast<double>(r[d].extent());
}
double points_of(const std::vector<Span> &loops) {
    double p = 1;
    for (const Span &s : loops)
        p *= static_cast<double>(std::max<int64_t>(1, s.extent()));
    return p;
}

// The unique bytes and lines read from each producer (after following
// inlined Funcs), per realization, per point, per thread and per task, in
// all and by the memory level each producer is stored at.
void set_read_footprints(ScheduleFeatures &f, const LoopNest &nest, const Stage &st, const ScheduledStage &ss,
                         double points_real) {
    using SF = ScheduleFeature;
    const FunctionDAG &dag = nest.dag;
    const auto dm_real = nest.demand(st, ss.loops_realization);
    const auto dm_thread = nest.demand(st, ss.loops_thread);
    const auto dm_block = nest.demand(st, ss.loops_block);
    double ub = 0, ul = 0, alloc_bytes = 0;
    double lvl_bytes[3] = {0, 0, 0}, lvl_lines[3] = {0, 0, 0}, lvl_alloc[3] = {0, 0, 0};
    double thr_bytes[3] = {0, 0, 0}, thr_lines[3] = {0, 0, 0};
    double task_bytes = 0, task_lines = 0;
    for (const auto &kv : *dm_real) {
        int pb = dag.producer_bytes(kv.first);
        int lvl = static_cast<int>(nest.memory_level(kv.first));
        double b = bytes_of(kv.second, pb), l = lines_of(kv.second, nest.storage_innermost(kv.first));
        double a = bytes_of(nest.allocation(kv.first), pb);
        ub += b;
        ul += l;
        alloc_bytes += a;
        lvl_bytes[lvl] += b;
        lvl_lines[lvl] += l;
        lvl_alloc[lvl] += a;
    }
    for (const auto &kv : *dm_thread) {
        int lvl = static_cast<int>(nest.memory_level(kv.first));
        thr_bytes[lvl] += bytes_of(kv.second, dag.producer_bytes(kv.first));
        thr_lines[lvl] += lines_of(kv.second, nest.storage_innermost(kv.first));
    }
    for (const auto &kv : *dm_block) {
        task_bytes += bytes_of(kv.second, dag.producer_bytes(kv.first));
        task_lines += lines_of(kv.second, nest.storage_innermost(kv.first));
    }
    f[SF::unique_bytes_read_per_realization] = ub;
    f[SF::unique_lines_read_per_realization] = ul;
    f[SF::allocation_bytes_read_per_realization] = alloc_bytes;
    f[SF::unique_bytes_read_per_point] = ub / points_real;
    f[SF::unique_lines_read_per_point] = ul / points_real;
    // A "task" is one block of the kernel; for a Thread-level stage that is
    // all of its host's threads in the block.
    f[SF::unique_bytes_read_per_task] = task_bytes;
    f[SF::unique_lines_read_per_task] = task_lines;
    const SF ub_f[3] = {SF::unique_global_bytes_read_per_realization,
                        SF::unique_shared_bytes_read_per_realization,
                        SF::unique_register_bytes_read_per_realization};
    const SF ul_f[3] = {SF::unique_global_lines_read_per_realization,
                        SF::unique_shared_lines_read_per_realization,
                        SF::unique_register_lines_read_per_realization};
    const SF tb_f[3] = {SF::unique_global_bytes_read_per_thread, SF::unique_shared_bytes_read_per_thread,
                        SF::unique_register_bytes_read_per_thread};
    const SF tl_f[3] = {SF::unique_global_lines_read_per_thread, SF::unique_shared_lines_read_per_thread,
                        SF::unique_register_lines_read_per_thread};
    const SF al_f[3] = {SF::global_allocation_bytes_read_per_realization,
                        SF::shared_allocation_bytes_read_per_realization,
                        SF::register_allocation_bytes_read_per_realization};
    for (int q = 0; q < 3; q++) {
        f[ub_f[q]] = lvl_bytes[q];
        f[ul_f[q]] = lvl_lines[q];
        f[tb_f[q]] = thr_bytes[q];
        f[tl_f[q]] = thr_lines[q];
        f[al_f[q]] = lvl_alloc[q];
    }
}

// Occupancy: blocks resident per SM, limited by threads, warps, blocks and
// shared memory (registers are unknown before ptxas: not modelled).
void set_occupancy(ScheduleFeatures &f, const Kernel &k, const GpuProfile &gpu, int ws) {
    using SF = ScheduleFeature;
    int64_t warps_per_block = (std::max<int64_t>(1, k.threads_per_block) + ws - 1) / ws;
    int64_t by_blocks = std::max(1, gpu.max_blocks_per_sm);
    int64_t by_threads = std::max<int64_t>(1, gpu.max_threads_per_sm / (warps_per_block * ws));
    int64_t by_warps = std::max<int64_t>(1, gpu.max_warps_per_sm / warps_per_block);
    int64_t by_shared =
        k.shared_bytes > 0 ? std::max<int64_t>(0, gpu.shared_mem_per_sm_bytes / k.shared_bytes) : by_blocks;
    int64_t active_blocks = std::min({by_blocks, by_threads, by_warps, by_shared});
    f[SF::max_warp_occupancy] =
        static_cast<double>(active_blocks * warps_per_block) / std::max(1, gpu.max_warps_per_sm);
    f[SF::max_block_occupancy] = static_cast<double>(active_blocks) / std::max(1, gpu.max_blocks_per_sm);
    f[SF::shared_mem_occupancy] = static_cast<double>(k.shared_bytes) /
                                  static_cast<double>(std::max<long>(1, gpu.shared_mem_per_sm_bytes));
    f[SF::shared_mem_block_limit_factor] =
        static_cast<double>(std::min(by_shared, by_blocks)) / static_cast<double>(by_blocks);
}

} // namespace

ScheduleFeatures featurize_stage(const LoopNest &nest, int index, const GpuProfile &gpu) {
    using SF = ScheduleFeature;
    const FunctionDAG &dag = nest.dag;
    const ScheduledStage &ss = nest.stages[index];
    const Node &node = dag.nodes[ss.node];
    const Stage &st = node.stages[ss.stage];
    const Kernel &k = nest.kernels[ss.kernel];
    const int bpp = node.bytes_per_point;
    ScheduleFeatures f;

    const double points_real = points_of(ss.loops_realization);
    const double realizations = static_cast<double>(ss.num_realizations);
    f[SF::num_realizations] = realizations;
    f[SF::num_productions] = realizations; // store_at == compute_at here
    f[SF::points_computed_per_realization] = points_real;
    f[SF::points_computed_per_production] = points_real;
    f[SF::points_computed_total] = points_real * realizations;
    f[SF::points_computed_minimum] = points_of(dag.loop_bounds(st, node.region));
    f[SF::num_scalars] = f[SF::points_computed_total];
    int first_pure = -1;
    for (size_t l = 0; l < st.loops.size(); l++)
        if (!st.loops[l].is_rvar && first_pure < 0) first_pure = static_cast<int>(l);
    f[SF::innermost_loop_extent] = st.loops.empty() ? 1.0 : static_cast<double>(ss.serial[0]);
    f[SF::innermost_pure_loop_extent] = first_pure < 0 ? 1.0 : static_cast<double>(ss.serial[first_pure]);
    double serial_pure = 1;
    for (size_t l = 0; l < st.loops.size(); l++)
        if (st.tileable(l)) serial_pure *= static_cast<double>(ss.serial[l]);
    // Lowering unrolls serial loops of total extent < 16 (sec. 4.7).
    f[SF::unrolled_loop_extent] =
        serial_pure < 16 && ss.location != ComputeLocation::Thread ? serial_pure : 1;
    f[SF::inner_parallelism] = static_cast<double>(ss.threads);
    f[SF::outer_parallelism] = static_cast<double>(k.num_blocks);
    f[SF::num_tasks] = static_cast<double>(k.num_blocks);
    f[SF::num_blocks] = static_cast<double>(k.num_blocks);

    const Region &own_alloc = nest.realization_region[ss.node];
    const int own_innermost = nest.storage_innermost(ProducerRef{ss.node, false});
    f[SF::bytes_at_realization] = bytes_of(own_alloc, bpp);
    f[SF::bytes_at_production] = f[SF::bytes_at_realization];
    f[SF::bytes_at_root] = bytes_of(node.region, bpp);
    f[SF::innermost_bytes_at_realization] = innermost_points(own_alloc, own_innermost) * bpp;
    f[SF::innermost_bytes_at_production] = f[SF::innermost_bytes_at_realization];
    f[SF::innermost_bytes_at_root] = innermost_points(node.region, own_innermost) * bpp;

    // Loads: after following inlined Funcs.
    // (inlined_calls stays 0 here: it belongs to the inlined Func's own row,
    // see inlined_rows below.)
    const std::shared_ptr<const EffectiveAccesses> accesses_shared = nest.accesses(st);
    const EffectiveAccesses &accesses = *accesses_shared;

    set_read_footprints(f, nest, st, ss, points_real);

    // Working sets: the allocations live at each level of this stage's nest.
    double ws_block = static_cast<double>(k.shared_bytes), ws_thread = 0;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const FuncDecision &fd = nest.decisions.funcs[n];
        if (fd.location == ComputeLocation::Thread && fd.host == ss.node)
            ws_thread += bytes_of(nest.realization_region[n], dag.nodes[n].bytes_per_point);
    }
    f[SF::working_set] = f[SF::bytes_at_realization] + ws_thread * static_cast<double>(ss.threads);
    f[SF::working_set_at_task] = ws_block;
    f[SF::working_set_at_production] = f[SF::bytes_at_production];
    f[SF::working_set_at_realization] = f[SF::bytes_at_realization];
    // Every root allocation: the state's, not the stage's; featurize() sets
    // it on every row of a state.
    f[SF::working_set_at_root] = 0;
    f[SF::working_set_at_thread] = ws_thread;

    // GPU parallelism.
    f[SF::points_computed_per_thread] = points_of(ss.loops_thread);
    const int ws = std::max(1, gpu.warp_size);
    // This thread's buffers, looked up once per stage (a lookup in a shared
    // library is a call; once per access pattern it was 2% of camera_pipe's
    // search).
    Lanes &L = thread_scratch<Lanes>();
    make_lanes(L, nest, ss, st, ws);
    f[SF::num_warps_per_block] = static_cast<double>(L.warps);
    f[SF::num_active_warps_per_block] = static_cast<double>(L.active_warps);
    f[SF::num_threads_per_block] = static_cast<double>(ss.threads);
    f[SF::expr_branching] = st.strahler;
    const double max_tpb = std::max(1, gpu.max_threads_per_block);
    f[SF::block_occupancy] = static_cast<double>(ss.threads) / max_tpb;
    double lanes_available = static_cast<double>(L.active_warps) * ws;
    f[SF::warp_lane_utilization] =
        lanes_available > 0 ? static_cast<double>(L.active_threads) / lanes_available : 0;
    f[SF::idle_lane_wastage] = (lanes_available - static_cast<double>(L.active_threads)) / max_tpb;

    // Memory transactions per block.
    MemoryLevel own = ss.location == ComputeLocation::Root    ? MemoryLevel::Global
                      : ss.location == ComputeLocation::Block ? MemoryLevel::Shared
                                                              : MemoryLevel::Register;
    const BlockTransactions t =
        block_transactions(nest, ss, L, accesses, own_alloc, own_innermost, own, ws, gpu.shared_mem_banks);
    const MemStats &gl = t.global_loads, &sl = t.shared_loads, &gs = t.global_stores, &sst = t.shared_stores;
    // Thread-level stages run once per host thread; the transactions above
    // cover one pass of the block's warps, which is one realization each.
    f[SF::num_global_mem_loads_per_block] = gl.transactions;
    f[SF::num_shared_mem_loads_per_block] = sl.transactions;
    f[SF::num_global_mem_stores_per_block] = gs.transactions;
    f[SF::num_shared_mem_stores_per_block] = sst.transactions;
    auto eff = [](const MemStats &m, double tx_bytes) {
        return m.transactions > 0 ? std::min(1.0, m.bytes_used / (m.transactions * tx_bytes)) : 1.0;
    };
    const double shared_tx_bytes = 4.0 * gpu.shared_mem_banks;
    f[SF::global_mem_load_efficiency] = eff(gl, 32);
    f[SF::shared_mem_load_efficiency] = eff(sl, shared_tx_bytes);
    f[SF::global_mem_store_efficiency] = eff(gs, 32);
    f[SF::shared_mem_store_efficiency] = eff(sst, shared_tx_bytes);

    // Bytes this stage writes per block, by level.
    Region w = nest.written(st, ss.loops_block);
    double wb = bytes_of(w, bpp), wi = innermost_points(w, own_innermost) * bpp;
    if (own == MemoryLevel::Register) {
        wb = bytes_of(own_alloc, bpp) * static_cast<double>(ss.threads);
        wi = innermost_points(own_alloc, own_innermost) * bpp;
    }
    const SF at_task[3] = {SF::global_bytes_at_task, SF::shared_bytes_at_task, SF::register_bytes_at_task};
    const SF inner_task[3] = {SF::global_innermost_bytes_at_task, SF::shared_innermost_bytes_at_task,
                              SF::register_innermost_bytes_at_task};
    f[at_task[static_cast<int>(own)]] = wb;
    f[inner_task[static_cast<int>(own)]] = wi;

    set_occupancy(f, k, gpu, ws);

    for (double &v : f.values) {
        if (!std::isfinite(v) || v < 0) v = 0;
    }
    return f;
}

namespace {

// What a kernel's features depend on: its Funcs' decisions, and for every
// producer its stages read (through inlined Funcs) whether it is inlined,
// and if not where it is stored.
// Scratch buffers of kernel_key, reused across kernels and states.
struct KeyScratch {
    std::vector<int> members;
    std::vector<char> visited;
    std::vector<const Stage *> work;
};

void kernel_key(const LoopNest &nest, int kernel, std::vector<int64_t> &key, KeyScratch &scratch) {
    const FunctionDAG &dag = nest.dag;
    const Kernel &k = nest.kernels[kernel];
    key.clear();
    key.push_back(k.node);
    key.push_back(k.stage);
    std::vector<int> &members = scratch.members;
    members.clear();
    for (int idx : k.stages) {
        int n = nest.stages[idx].node;
        if (std::find(members.begin(), members.end(), n) == members.end()) members.push_back(n);
    }
    std::sort(members.begin(), members.end());
    std::vector<char> &visited = scratch.visited;
    visited.assign(dag.nodes.size(), 0);
    std::vector<const Stage *> &work = scratch.work;
    work.clear();
    for (int n : members) {
        const FuncDecision &f = nest.decisions.funcs[n];
        key.push_back(-1);
        key.push_back(n);
        key.push_back(static_cast<int64_t>(f.location));
        key.push_back(f.host);
        // Layouts other than the definition's only (the keys of states
        // without them stay as they were).
        if (f.storage_innermost != 0) key.push_back(-4 - f.storage_innermost);
        if (f.pad_shared) key.push_back(-4); // distinct from the layout marks (-5 and below)
        for (int idx : k.stages) {
            const ScheduledStage &ss = nest.stages[idx];
            if (ss.node != n) continue;
            key.push_back(-2);
            key.insert(key.end(), ss.serial.begin(), ss.serial.end());
            key.insert(key.end(), ss.thread.begin(), ss.thread.end());
            work.push_back(&dag.nodes[n].stages[ss.stage]);
        }
    }
    key.push_back(-3);
    while (!work.empty()) {
        const Stage *st = work.back();
        work.pop_back();
        for (const Edge &e : st->edges) {
            if (e.producer.is_image || visited[e.producer.index]) continue;
            int p = e.producer.index;
            visited[p] = 1;
            ComputeLocation loc = nest.location(p);
            if (loc == ComputeLocation::Unscheduled) loc = ComputeLocation::Root; // both read from global
            key.push_back(p);
            key.push_back(static_cast<int64_t>(loc));
            const int layout = nest.storage_innermost(ProducerRef{p, false});
            if (layout != 0) key.push_back(-4 - layout);
            if (loc == ComputeLocation::Inline) work.push_back(&dag.nodes[p].stages[0]);
        }
    }
}

// Calls made to inlined Funcs by one evaluation of `st`, each call site
// counted once per point; calls an inlined Func makes to further inlined
// Funcs happen once per call to it. Counted Func by Func
// (drain_in_dag_order), not path by path.
void count_inlined_calls(const LoopNest &nest, const Stage &st, double calls_per_eval,
                         std::map<int, double> &calls) {
    std::map<int, double> pending; // inlined Func -> calls reaching it from st
    auto visit = [&](const Stage &s, double per_eval) {
        for (const Access &a : s.accesses) {
            if (a.producer.is_image || a.is_self) continue;
            int p = a.producer.index;
            if (nest.location(p) != ComputeLocation::Inline) continue;
            pending[p] += per_eval;
        }
    };
    visit(st, calls_per_eval);
    drain_in_dag_order(pending, [&](int node, double n_calls) {
        calls[node] += n_calls;
        visit(nest.dag.nodes[node].stages[0], n_calls);
    });
}

// A row per inlined Func (Adams et al. 2019; Anderson et al. 2021 appendix B
// tells inlined stages by inlined_calls > 0): its arithmetic runs once per
// call inside its consumers' threads, so the row carries the total call
// count as its points and scalars; the loads it issues are already in its
// consumers' rows (collect_accesses follows inlined calls).
void append_inlined_rows(const LoopNest &nest, StateFeatures &s) {
    using SF = ScheduleFeature;
    std::map<int, double> calls;
    for (size_t i = 0; i < nest.stages.size(); i++) {
        const ScheduledStage &ss = nest.stages[i];
        count_inlined_calls(nest, nest.dag.nodes[ss.node].stages[ss.stage],
                            s.schedule[i][SF::points_computed_total], calls);
    }
    for (const auto &[node, n_calls] : calls) {
        if (n_calls <= 0) continue;
        s.stage_ids.push_back(nest.dag.stage_id(node, 0));
        s.schedule.push_back(inlined_stage_row(n_calls));
    }
}

} // namespace

const FeatureMemo::KernelRows *FeatureMemo::find(const std::vector<int64_t> &key) {
    uint64_t h = hash_words(key);
    auto range = index_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second->key != key) continue;
        lru_.splice(lru_.begin(), lru_, it->second); // iterators stay valid
        return &it->second->rows;
    }
    return nullptr;
}

void FeatureMemo::insert(std::vector<int64_t> key, KernelRows rows) {
    uint64_t h = hash_words(key);
    // Payload plus list node, hash node and vector headers (approximate).
    size_t b = key.size() * sizeof(int64_t) + rows.rows.size() * sizeof(ScheduleFeatures) +
               rows.hashes.size() * sizeof(RowCostCache::Prefix) + 128;
    lru_.push_front(Entry{h, std::move(key), std::move(rows), b});
    index_.emplace(h, lru_.begin());
    bytes_ += b;
    while (bytes_ > max_bytes_ && lru_.size() > 1) {
        auto victim = std::prev(lru_.end());
        auto range = index_.equal_range(victim->hash);
        for (auto it = range.first; it != range.second; ++it) {
            if (it->second == victim) {
                index_.erase(it);
                break;
            }
        }
        bytes_ -= victim->bytes;
        lru_.erase(victim);
        evictions++;
    }
}

namespace {

// featurize's buffers, reused across states.
struct FeaturizeScratch {
    KeyScratch key_scratch;
    std::vector<std::vector<int64_t>> keys;              // per kernel
    std::vector<const FeatureMemo::KernelRows *> source; // per kernel: its rows
    std::vector<FeatureMemo::KernelRows> computed;       // per kernel not memoized
    std::vector<size_t> position;                        // per stage: its place in its kernel
    std::vector<int64_t> retile_key;                     // featurize_retiled's kernel
    FeatureMemo::KernelRows retile_rows;                 // and its rows where computed
    // Hashes of inlined Funcs' rows by (stage id, bits of the call count),
    // which is all such a row holds (inlined_stage_row); valid for any
    // pipeline, so kept across searches, and emptied when it grows large.
    std::map<std::pair<int, uint64_t>, RowCostCache::Prefix> inlined_hashes;
};

// Kernel kidx's rows in the memo (its key made into `key`), or null; a
// hit is counted. An entry is taken only with a row and a hash per stage.
const FeatureMemo::KernelRows *memoized_rows(const LoopNest &nest, int kidx, FeatureMemo &memo,
                                             std::vector<int64_t> &key, KeyScratch &key_scratch) {
    kernel_key(nest, kidx, key, key_scratch);
    const FeatureMemo::KernelRows *cached = memo.find(key);
    const size_t n = nest.kernels[kidx].stages.size();
    if (!cached || cached->rows.size() != n || cached->hashes.size() != n) return nullptr;
    memo.hits++;
    return cached;
}

// Kernel kidx's rows computed into `fresh`, and with `hashed` (a memo) each
// row's RowCostCache::prefix: hashed once, when computed, so every later
// state that finds the kernel in the memo takes the hashes with the rows.
void compute_rows(const LoopNest &nest, int kidx, const GpuProfile &gpu, bool hashed,
                  FeatureMemo::KernelRows &fresh) {
    const Kernel &k = nest.kernels[kidx];
    fresh.rows.clear();
    fresh.hashes.clear();
    fresh.rows.reserve(k.stages.size());
    for (int idx : k.stages)
        fresh.rows.push_back(featurize_stage(nest, idx, gpu));
    if (!hashed) return;
    fresh.hashes.reserve(k.stages.size());
    for (size_t q = 0; q < k.stages.size(); q++) {
        const ScheduledStage &ss = nest.stages[k.stages[q]];
        fresh.hashes.push_back(RowCostCache::prefix(nest.dag.stage_id(ss.node, ss.stage), fresh.rows[q]));
    }
}

} // namespace

StateFeatures featurize(const LoopNest &nest, const GpuProfile &gpu, FeatureMemo *memo) {
    StateFeatures s;
    std::vector<ScheduleFeatures> &rows = s.schedule;
    // Room for the inlined Funcs' rows too: growing the vector later would
    // copy every row.
    size_t inlined = 0;
    for (const FuncDecision &f : nest.decisions.funcs)
        inlined += f.location == ComputeLocation::Inline ? 1 : 0;
    rows.reserve(nest.stages.size() + inlined);
    FeaturizeScratch &scratch = thread_scratch<FeaturizeScratch>();
    const size_t n_kernels = nest.kernels.size();
    scratch.keys.resize(n_kernels);
    scratch.source.assign(n_kernels, nullptr);
    scratch.computed.resize(n_kernels);
    scratch.position.assign(nest.stages.size(), 0);
    // Each kernel's rows are found in the memo or computed first, then
    // copied once into the state's rows in stage order: a row is 75 doubles,
    // and sizing the rows first (zero-filled, then overwritten) was 4% of a
    // small deep pipeline's search. Nothing is inserted into the memo until
    // the rows are copied, so the rows it returned stay valid until then.
    for (size_t kidx = 0; kidx < n_kernels; kidx++) {
        const Kernel &k = nest.kernels[kidx];
        for (size_t q = 0; q < k.stages.size(); q++)
            scratch.position[k.stages[q]] = q;
        if (memo) {
            if (const FeatureMemo::KernelRows *cached = memoized_rows(
                    nest, static_cast<int>(kidx), *memo, scratch.keys[kidx], scratch.key_scratch)) {
                scratch.source[kidx] = cached;
                continue;
            }
        }
        compute_rows(nest, static_cast<int>(kidx), gpu, memo != nullptr, scratch.computed[kidx]);
        scratch.source[kidx] = &scratch.computed[kidx];
    }
    // With a memo every row that has a kernel comes with its hash.
    bool hashed = memo != nullptr;
    if (hashed) s.row_hashes.reserve(rows.capacity());
    for (size_t i = 0; i < nest.stages.size(); i++) {
        const int kidx = nest.stages[i].kernel;
        if (kidx < 0 || !scratch.source[kidx]) {
            rows.emplace_back(); // in no kernel: not expected, an all-zero row as before
            hashed = false;
        } else {
            rows.push_back(scratch.source[kidx]->rows[scratch.position[i]]);
            if (hashed) s.row_hashes.push_back(scratch.source[kidx]->hashes[scratch.position[i]]);
        }
    }
    if (memo) {
        for (size_t kidx = 0; kidx < n_kernels; kidx++) {
            if (scratch.source[kidx] != &scratch.computed[kidx]) continue;
            memo->misses++;
            memo->insert(std::move(scratch.keys[kidx]), std::move(scratch.computed[kidx]));
        }
    }
    // working_set_at_root depends on every root allocation: per state.
    double ws_root = 0;
    for (size_t n = 0; n < nest.dag.nodes.size(); n++) {
        if (nest.location(static_cast<int>(n)) == ComputeLocation::Root)
            ws_root += static_cast<double>(region_points(nest.dag.nodes[n].region)) *
                       nest.dag.nodes[n].bytes_per_point;
    }
    s.stage_ids.reserve(nest.stages.size() + inlined);
    for (size_t i = 0; i < nest.stages.size(); i++) {
        rows[i][ScheduleFeature::working_set_at_root] = ws_root;
        s.stage_ids.push_back(nest.dag.stage_id(nest.stages[i].node, nest.stages[i].stage));
    }
    append_inlined_rows(nest, s);
    if (hashed) {
        // The inlined Funcs' rows, appended above: a few per state, each
        // made from its call count alone, so hashed once per count (hashing
        // them for every state was 3% of a small deep pipeline's search).
        for (size_t i = s.row_hashes.size(); i < s.schedule.size(); i++) {
            uint64_t calls;
            std::memcpy(&calls, &s.schedule[i].values[static_cast<size_t>(ScheduleFeature::inlined_calls)],
                        sizeof calls);
            if (scratch.inlined_hashes.size() > 4096) scratch.inlined_hashes.clear();
            auto [it, fresh] = scratch.inlined_hashes.try_emplace({s.stage_ids[i], calls});
            if (fresh) it->second = RowCostCache::prefix(s.stage_ids[i], s.schedule[i]);
            s.row_hashes.push_back(it->second);
        }
    } else {
        s.row_hashes.clear();
    }
    return s;
}

StateFeatures featurize_retiled(const LoopNest &nest, const GpuProfile &gpu, FeatureMemo *memo,
                                const StateFeatures &before, int stage) {
    StateFeatures s = before;
    const size_t i = static_cast<size_t>(stage);
    const int kidx = nest.stages[i].kernel; // holds this stage alone
    FeaturizeScratch &scratch = thread_scratch<FeaturizeScratch>();
    const FeatureMemo::KernelRows *rows =
        memo ? memoized_rows(nest, kidx, *memo, scratch.retile_key, scratch.key_scratch) : nullptr;
    if (!rows) {
        compute_rows(nest, kidx, gpu, memo != nullptr, scratch.retile_rows);
        rows = &scratch.retile_rows;
    }
    // working_set_at_root depends on the allocations at root, not the tiling.
    const double ws_root = before.schedule[i][ScheduleFeature::working_set_at_root];
    s.schedule[i] = rows->rows[0];
    s.schedule[i][ScheduleFeature::working_set_at_root] = ws_root;
    if (!s.row_hashes.empty()) s.row_hashes[i] = rows->hashes.at(0);
    if (memo && rows == &scratch.retile_rows) {
        memo->misses++;
        memo->insert(scratch.retile_key, std::move(scratch.retile_rows));
    }
    return s;
}

} // namespace gpusched
