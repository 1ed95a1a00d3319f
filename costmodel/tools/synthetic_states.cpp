#include "costmodel/tools/synthetic_states.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpusched {
namespace {

using F = ScheduleFeature;

int pick(std::mt19937_64 &rng, std::initializer_list<int> choices) {
    std::uniform_int_distribution<std::size_t> d(0, choices.size() - 1);
    return *(choices.begin() + static_cast<std::ptrdiff_t>(d(rng)));
}

double ceil_div(double a, double b) {
    return std::ceil(a / b);
}

enum class Placement { Root, Shared, Inline };

struct Tiling {
    int tx = 32, ty = 1, sx = 1, sy = 1;
    int bw() const { return tx * sx; }
    int bh() const { return ty * sy; }
    int threads() const { return tx * ty; }
};

// Global sectors (32 B) one warp-wide load instruction touches when lanes
// step `stride_elems` elements apart along x, plus one for misalignment when
// the access has a halo offset.
double sectors_per_instruction(int lanes_in_row, int stride_elems, int bytes, bool misaligned) {
    const int rows = 32 / std::max(lanes_in_row, 1);
    const double per_row = ceil_div(double(lanes_in_row) * stride_elems * bytes, 32.0) + (misaligned ? 1 : 0);
    return std::min(32.0, rows * per_row);
}

// Shared-memory wavefronts per warp access: the bank-conflict degree of a
// word stride (32 banks of 4 bytes, CUDA programming guide "Shared Memory").
double bank_conflict_degree(int stride_elems, int bytes) {
    const int word_stride = std::max(1, stride_elems * bytes / 4);
    return double(std::gcd(word_stride, 32));
}

// Placement per stage; the output (last) is always root. A stage at its
// consumer's block level needs a root consumer and a global producer; an
// inlined stage needs a non-inlined consumer.
std::vector<Placement> random_placement(int n, std::mt19937_64 &rng) {
    std::vector<Placement> place(n, Placement::Root);
    for (int s = n - 2; s >= 0; --s) {
        const int c = pick(rng, {0, 0, 1, 2});
        if (c == 1 && place[s + 1] == Placement::Root)
            place[s] = Placement::Shared;
        else if (c == 2 && place[s + 1] != Placement::Inline)
            place[s] = Placement::Inline;
    }
    for (int s = 1; s < n; ++s) // shared stages read global memory only
        if (place[s] == Placement::Shared && place[s - 1] != Placement::Root) place[s] = Placement::Root;
    return place;
}

// Each stage's tiling, drawn again until its block fits the GPU.
std::vector<Tiling> random_tiling(int n, const GpuProfile &gpu, std::mt19937_64 &rng) {
    std::vector<Tiling> tiling(n);
    for (int s = 0; s < n; ++s) {
        Tiling &t = tiling[s];
        do {
            t.tx = pick(rng, {16, 32, 64});
            t.ty = pick(rng, {1, 2, 4, 8, 16});
        } while (t.threads() > gpu.max_threads_per_block);
        t.sx = pick(rng, {1, 1, 2, 4});
        t.sy = pick(rng, {1, 1, 2, 4});
    }
    return tiling;
}

// The kernel stage s runs in: its own, or its nearest root consumer's.
int kernel_of(const std::vector<Placement> &place, int s) {
    int k = s;
    while (place[k] != Placement::Root)
        ++k;
    return k;
}

// Shared memory of kernel k (tiled by t): every stage placed at its block level.
double shared_bytes_per_block(const SyntheticPipeline &p, const std::vector<Placement> &place,
                              const Tiling &t, int k) {
    const int b = p.element_bytes;
    double shared_per_block = 0;
    for (int q = 0; q < k; ++q) {
        if (place[q] != Placement::Shared) continue;
        if (kernel_of(place, q) != k) continue;
        const int rc = p.radius[q + 1];
        shared_per_block += double(t.bw() + 2 * rc) * (t.bh() + 2 * rc) * b;
    }
    return shared_per_block;
}

// A stage in its kernel: the kernel's shape and what the stage reads.
struct StageInKernel {
    Tiling t; // the kernel's
    double blocks = 0, threads = 0, warps = 0;
    int lanes_in_row = 0;
    int R = 0;               // the read's radius, added up through inlined producers
    bool src_shared = false; // whether what it reads is at its kernel's block level
    double taps = 0;
    double shared_per_block = 0; // the kernel's
};

StageInKernel stage_in_kernel(const SyntheticPipeline &p, const std::vector<Placement> &place,
                              const std::vector<Tiling> &tiling, int s) {
    const double W = p.width, H = p.height;
    StageInKernel sk;
    const int k = kernel_of(place, s);
    const Tiling &t = tiling[k];
    sk.t = t;
    sk.blocks = ceil_div(W, t.bw()) * ceil_div(H, t.bh());
    sk.threads = t.threads();
    sk.warps = ceil_div(sk.threads, 32);
    sk.lanes_in_row = std::min(t.tx, 32);

    // What this stage reads: its producer, or through inlined producers
    // the first non-inlined one, with the radii added up.
    int R = p.radius[s];
    int src = s - 1;
    while (src >= 0 && place[src] == Placement::Inline) {
        R += p.radius[src];
        --src;
    }
    sk.R = R;
    sk.src_shared = src >= 0 && place[src] == Placement::Shared;
    sk.taps = double(2 * R + 1) * (2 * R + 1);
    sk.shared_per_block = shared_bytes_per_block(p, place, t, k);
    return sk;
}

// Registers an expression of the stage's taps takes.
double expr_registers(const StageInKernel &sk) {
    return std::ceil(std::log2(sk.taps + 1)) + 1;
}

// The bytes one thread of the stage holds: its inputs' footprint and its outputs.
double thread_working_set(const StageInKernel &sk, int b) {
    const Tiling &t = sk.t;
    const int R = sk.R;
    return (double(t.sx + 2 * R) * (t.sy + 2 * R) + double(t.sx) * t.sy) * b;
}

// The features of the stage's kernel: its launch, its occupancy, and the
// pipeline's size.
ScheduleFeatures kernel_features(const SyntheticPipeline &p, const StageInKernel &sk, const GpuProfile &gpu) {
    const int b = p.element_bytes;
    const double W = p.width, H = p.height;
    const double blocks = sk.blocks, threads = sk.threads, warps = sk.warps;
    const double shared_per_block = sk.shared_per_block;
    ScheduleFeatures f;
    const double expr_regs = expr_registers(sk);
    const double ws_thread = thread_working_set(sk, b);
    const double regs = 16 + ws_thread / 4 + expr_regs;
    double blocks_per_sm =
        std::min<double>(gpu.max_blocks_per_sm, std::floor(double(gpu.max_threads_per_sm) / threads));
    blocks_per_sm =
        std::min(blocks_per_sm, std::floor(gpu.registers_per_sm / (std::min(regs, 255.0) * threads)));
    const double shared_limit = shared_per_block > 0
                                    ? std::floor(double(gpu.shared_mem_per_sm_bytes) / shared_per_block)
                                    : double(gpu.max_blocks_per_sm);
    blocks_per_sm = std::max(1.0, std::min(blocks_per_sm, shared_limit));

    f[F::num_blocks] = blocks;
    f[F::num_threads_per_block] = threads;
    f[F::num_warps_per_block] = warps;
    f[F::num_active_warps_per_block] = warps;
    f[F::block_occupancy] = threads / gpu.max_threads_per_block;
    f[F::warp_lane_utilization] = threads / (32 * warps);
    f[F::idle_lane_wastage] = (32 * warps - threads) / gpu.max_threads_per_block;
    f[F::expr_branching] = expr_regs;
    f[F::max_block_occupancy] = blocks_per_sm / gpu.max_blocks_per_sm;
    f[F::max_warp_occupancy] = std::min(1.0, blocks_per_sm * warps / gpu.max_warps_per_sm);
    f[F::shared_mem_occupancy] = shared_per_block / double(gpu.shared_mem_per_sm_bytes);
    f[F::shared_mem_block_limit_factor] =
        std::min<double>(gpu.max_blocks_per_sm, shared_limit) / gpu.max_blocks_per_sm;
    f[F::inner_parallelism] = threads;
    f[F::outer_parallelism] = blocks;
    f[F::num_tasks] = blocks;
    f[F::bytes_at_root] = W * H * b;
    f[F::innermost_bytes_at_root] = W * b;
    f[F::points_computed_minimum] = W * H;
    return f;
}

// The region a computed (root or shared) stage computes per realization
// and per thread, and how its threads step through it.
struct StageRegion {
    bool root = false;
    int rc = 0; // the consumer's radius: the halo a shared stage computes
    double tile_w = 0, tile_h = 0;
    double realizations = 0, region = 0, pts_per_thread = 0, total = 0;
    int stride = 0;
    double loads_per_thread = 0;
};

StageRegion stage_region(const SyntheticPipeline &p, const StageInKernel &sk, bool root, int s) {
    const double W = p.width, H = p.height;
    const Tiling &t = sk.t;
    const int R = sk.R;
    const double blocks = sk.blocks, threads = sk.threads, taps = sk.taps;
    StageRegion g;
    g.root = root;
    // Region this stage computes per realization and per thread.
    g.rc = root ? 0 : p.radius[s + 1];
    g.tile_w = t.bw() + 2 * g.rc;
    g.tile_h = t.bh() + 2 * g.rc;
    g.realizations = root ? 1 : blocks;
    g.region = root ? W * H : g.tile_w * g.tile_h;
    g.pts_per_thread = root ? double(t.sx) * t.sy : std::ceil(g.region / threads);
    g.total = root ? blocks * t.bw() * t.bh() : blocks * g.region;
    // A root stage's threads step sx elements apart; a shared stage's
    // threads sweep its tile row by row (stride 1).
    g.stride = root ? t.sx : 1;
    g.loads_per_thread = root ? double(t.sx + 2 * R) * (t.sy + 2 * R) : g.pts_per_thread * taps;
    return g;
}

void set_region_features(ScheduleFeatures &f, const SyntheticPipeline &p, const StageInKernel &sk,
                         const StageRegion &g) {
    const int b = p.element_bytes;
    const double W = p.width;
    const Tiling &t = sk.t;
    const bool root = g.root;
    const double realizations = g.realizations, region = g.region, total = g.total, tile_w = g.tile_w;
    f[F::num_realizations] = realizations;
    f[F::num_productions] = realizations;
    f[F::points_computed_per_realization] = region;
    f[F::points_computed_per_production] = region;
    f[F::points_computed_total] = total;
    f[F::num_scalars] = total;
    f[F::points_computed_per_thread] = g.pts_per_thread;
    f[F::innermost_loop_extent] = root ? t.sx : 1;
    f[F::innermost_pure_loop_extent] = root ? t.sx : 1;
    f[F::unrolled_loop_extent] = root ? t.sx * t.sy : 1;
    f[F::bytes_at_realization] = region * b;
    f[F::bytes_at_production] = region * b;
    f[F::innermost_bytes_at_realization] = (root ? W : tile_w) * b;
    f[F::innermost_bytes_at_production] = (root ? W : tile_w) * b;
}

// What the stage reads (from global or shared memory), and its working sets.
void set_read_features(ScheduleFeatures &f, const SyntheticPipeline &p, const StageInKernel &sk,
                       const StageRegion &g, int s) {
    const int b = p.element_bytes;
    const double W = p.width, H = p.height;
    const Tiling &t = sk.t;
    const int R = sk.R;
    const bool root = g.root, src_shared = sk.src_shared;
    const double tile_w = g.tile_w, tile_h = g.tile_h, region = g.region;
    const double taps = sk.taps, threads = sk.threads, shared_per_block = sk.shared_per_block;
    const double ws_thread = thread_working_set(sk, b);
    const double read_w = (root ? W : tile_w) + 2 * R, read_h = (root ? H : tile_h) + 2 * R;
    const double thread_w = (root ? t.sx : 1) + 2 * R, thread_h = (root ? t.sy : 1) + 2 * R;
    const double task_w = t.bw() + 2 * R, task_h = t.bh() + 2 * R;
    const double src_alloc =
        src_shared ? (t.bw() + 2 * p.radius[s]) * double(t.bh() + 2 * p.radius[s]) * b : W * H * b;
    if (src_shared) {
        f[F::unique_shared_bytes_read_per_realization] = read_w * read_h * b;
        f[F::unique_shared_lines_read_per_realization] = read_h;
        f[F::unique_shared_bytes_read_per_thread] = thread_w * thread_h * b;
        f[F::unique_shared_lines_read_per_thread] = thread_h;
        f[F::shared_allocation_bytes_read_per_realization] = src_alloc;
    } else {
        f[F::unique_global_bytes_read_per_realization] = read_w * read_h * b;
        f[F::unique_global_lines_read_per_realization] = read_h;
        f[F::unique_global_bytes_read_per_thread] = thread_w * thread_h * b;
        f[F::unique_global_lines_read_per_thread] = thread_h;
        f[F::global_allocation_bytes_read_per_realization] = src_alloc;
    }
    f[F::unique_bytes_read_per_realization] = read_w * read_h * b;
    f[F::unique_lines_read_per_realization] = read_h;
    f[F::allocation_bytes_read_per_realization] = src_alloc;
    f[F::unique_bytes_read_per_point] = taps * b;
    f[F::unique_lines_read_per_point] = 2 * R + 1;
    f[F::unique_bytes_read_per_task] = task_w * task_h * b;
    f[F::unique_lines_read_per_task] = task_h;
    f[F::working_set] = region * b + ws_thread * threads;
    f[F::working_set_at_task] = shared_per_block;
    f[F::working_set_at_production] = root ? W * H * b : shared_per_block;
    f[F::working_set_at_realization] = f[F::working_set_at_production];
    f[F::working_set_at_root] = W * H * b;
    f[F::working_set_at_thread] = ws_thread;
}

// Memory transactions per block.
void set_transaction_features(ScheduleFeatures &f, const SyntheticPipeline &p, const StageInKernel &sk,
                              const StageRegion &g) {
    const int b = p.element_bytes;
    const Tiling &t = sk.t;
    const int R = sk.R;
    const bool root = g.root;
    const double warps = sk.warps, pts_per_thread = g.pts_per_thread;
    const int lanes_in_row = sk.lanes_in_row, stride = g.stride;
    const double load_instr = warps * g.loads_per_thread;
    if (sk.src_shared) {
        const double deg = bank_conflict_degree(stride, b);
        f[F::num_shared_mem_loads_per_block] = load_instr * deg;
        f[F::shared_mem_load_efficiency] = 1.0 / deg;
    } else {
        const double sec = sectors_per_instruction(root ? lanes_in_row : 32, stride, b, R > 0);
        f[F::num_global_mem_loads_per_block] = load_instr * sec;
        f[F::global_mem_load_efficiency] = std::min(1.0, 32.0 * b / (sec * 32.0));
    }
    if (root) {
        const double sec = sectors_per_instruction(lanes_in_row, stride, b, false);
        f[F::num_global_mem_stores_per_block] = warps * pts_per_thread * sec;
        f[F::global_mem_store_efficiency] = std::min(1.0, 32.0 * b / (sec * 32.0));
        f[F::global_bytes_at_task] = double(t.bw()) * t.bh() * b;
        f[F::global_innermost_bytes_at_task] = double(t.bw()) * b;
        f[F::shared_mem_store_efficiency] = 1;
    } else {
        f[F::num_shared_mem_stores_per_block] = warps * pts_per_thread;
        f[F::shared_mem_store_efficiency] = 1;
        f[F::global_mem_store_efficiency] = 1;
        f[F::shared_bytes_at_task] = g.region * b;
        f[F::shared_innermost_bytes_at_task] = g.tile_w * b;
    }
    if (f[F::global_mem_load_efficiency] == 0) f[F::global_mem_load_efficiency] = 1;
    if (f[F::shared_mem_load_efficiency] == 0) f[F::shared_mem_load_efficiency] = 1;
}

} // namespace

SyntheticPipeline random_synthetic_pipeline(std::mt19937_64 &rng) {
    SyntheticPipeline p;
    p.width = pick(rng, {256, 512, 1024, 1536, 2048, 4096});
    p.height = pick(rng, {256, 512, 1024, 2048});
    p.element_bytes = pick(rng, {1, 2, 4, 4, 4});
    const int n = std::uniform_int_distribution<int>(1, 6)(rng);
    const auto type = p.element_bytes == 4   ? ScalarTypeBucket::Float
                      : p.element_bytes == 2 ? ScalarTypeBucket::UInt16
                                             : ScalarTypeBucket::UInt8;
    for (int s = 0; s < n; ++s) {
        const int r = pick(rng, {0, 0, 1, 1, 2, 3});
        p.radius.push_back(r);
        PipelineFeatures f;
        const float taps = float((2 * r + 1) * (2 * r + 1));
        f.op(OpType::Add, type) = taps - 1 + float(std::uniform_int_distribution<int>(0, 4)(rng));
        f.op(OpType::Mul, type) = float(std::uniform_int_distribution<int>(0, int(taps))(rng));
        f.op(OpType::Const, type) = taps;
        f.op(OpType::Variable, ScalarTypeBucket::UInt32) = 2;
        if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) f.op(OpType::Div, type) = 1;
        if (std::uniform_int_distribution<int>(0, 5)(rng) == 0)
            f.op(OpType::ExternCall, ScalarTypeBucket::Float) = 1;
        f.op(s == 0 ? OpType::ImageCall : OpType::FuncCall, type) = taps;
        f.access(AccessPattern::Pointwise, s == 0 ? AccessType::LoadImage : AccessType::LoadFunc, type) =
            taps;
        f.access(AccessPattern::Pointwise, AccessType::Store, type) = 1;
        p.stages.push_back(f);
    }
    return p;
}

StateFeatures random_synthetic_state(const SyntheticPipeline &p, const GpuProfile &gpu,
                                     std::mt19937_64 &rng) {
    const int n = static_cast<int>(p.radius.size());
    const double W = p.width, H = p.height;

    const std::vector<Placement> place = random_placement(n, rng);
    const std::vector<Tiling> tiling = random_tiling(n, gpu, rng);

    StateFeatures state;
    for (int s = 0; s < n; ++s) {
        const StageInKernel sk = stage_in_kernel(p, place, tiling, s);
        if (sk.shared_per_block > double(gpu.shared_mem_per_block_bytes)) {
            // Over the 48 KiB per-block limit: the search prunes such a
            // state, so draw another one instead of emitting it.
            return random_synthetic_state(p, gpu, rng);
        }

        ScheduleFeatures f = kernel_features(p, sk, gpu);

        if (place[s] == Placement::Inline) {
            // Recomputed for every tap of every point of its consumer. The
            // row follows the search's convention for inlined Funcs
            // (docs/features.md, "Inlined Funcs"): the total call count as
            // its points and scalars, one block of one thread, nothing
            // else; its loads are in its consumer's row.
            const double consumer_taps = double(2 * p.radius[s + 1] + 1) * (2 * p.radius[s + 1] + 1);
            const double calls = W * H * consumer_taps;
            state.stage_ids.push_back(s);
            state.schedule.push_back(inlined_stage_row(calls));
            continue;
        }

        const StageRegion g = stage_region(p, sk, place[s] == Placement::Root, s);
        set_region_features(f, p, sk, g);
        set_read_features(f, p, sk, g, s);
        set_transaction_features(f, p, sk, g);
        state.stage_ids.push_back(s);
        state.schedule.push_back(f);
    }
    return state;
}

} // namespace gpusched
