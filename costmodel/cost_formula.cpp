#include "costmodel/cost_formula.h"

#include <algorithm>
#include <cmath>

#include "common/gpu_profile.h"
#include "costmodel/serial_chain.h"

namespace gpusched {

FormulaContext formula_context_for(const GpuProfile &profile) {
    FormulaContext c;
    if (profile.sm_count > 0) c.sm_count = profile.sm_count;
    if (profile.max_blocks_per_sm > 0) c.max_blocks_per_sm = profile.max_blocks_per_sm;
    return c;
}

// Orders of magnitude on a current datacenter GPU (H100: ~3.35 TB/s DRAM,
// ~67 TFLOP/s FP32, whitepaper table 3), chosen so an untrained coefficient of
// 1 is within a few orders of the truth. They are units, not predictions:
// the learned coefficients carry the real values.
namespace {
constexpr double kPerPoint = 1e-10;      // ~10 instructions per point at ~1e11 instr/ms
constexpr double kPerByte = 1e-9;        // ~0.3e-9 ms per DRAM byte
constexpr double kPerLine = 1e-8;        // a 32-byte sector or more
constexpr double kPerGlobalTxn = 1e-8;   // one 32-byte sector
constexpr double kPerSharedTxn = 1e-9;   // one shared-memory wavefront
constexpr double kPerRealization = 1e-5; // allocation
constexpr double kPerLaunch = 1e-4;      // launch or barrier per production
constexpr double kPerTask = 1e-9;        // per extra parallel thread
constexpr double kPerWorkingSetByte = 1e-9;
constexpr double kPerRegisterByte = 1e-10; // threads x bytes of per-thread working set
constexpr double kPerSerialLoad = 1e-4;    // a load a thread waits for: ~100-400 ns
constexpr double kPerSerialPoint = 1e-6;   // a thread's point issued: ~10 instructions at ~1.5 GHz
} // namespace

const std::array<double, kNumCoefficients> kTermUnitMs = {
    kPerByte,           // c0  register bytes per thread
    kPerPoint,          // c1  num_scalars (not inlined)
    kPerLine,           // c2  register lines per thread
    kPerPoint,          // c3  num_scalars (inlined)
    kPerPoint,          // c4  points computed (inlined)
    kPerLine,           // c5  global lines per realization
    kPerByte,           // c6  global bytes per realization
    kPerByte,           // c7  register bytes per realization
    kPerLine,           // c8  register lines per realization
    kPerWorkingSetByte, // c9  working set
    kPerByte,           // c10 bytes per point
    kPerByte,           // c11 shared bytes per thread
    kPerLine,           // c12 lines per point
    kPerByte,           // c13 global bytes per thread
    kPerByte,           // c14 bytes per task
    kPerLine,           // c15 lines per task
    kPerLine,           // c16 shared lines per realization
    kPerLine,           // c17 shared lines per thread
    kPerLine,           // c18 global lines per thread
    kPerPoint,          // c19 points computed (not inlined)
    kPerByte,           // c20 shared bytes per realization
    kPerGlobalTxn,      // c21 global store transactions
    kPerPoint,          // c22 false sharing
    kPerRegisterByte,   // c23 register pressure (ours)
    kPerRealization,    // c24 malloc
    kPerLaunch,         // c25 parallel launches
    kPerTask,           // c26 parallel tasks
    kPerGlobalTxn,      // c27 global load transactions (ours: unweighted in appendix B)
    kPerSharedTxn,      // c28 shared load transactions (ours: unweighted in appendix B)
    kPerSharedTxn,      // c29 shared store transactions
    kPerSerialLoad,     // c30 serial chain: loads waited for (formula version 2)
    kPerSerialPoint,    // c31 serial chain: points issued (formula version 2)
};

namespace {
// Efficiencies are bytes used / bytes moved. One byte used out of a 128-byte
// transfer is the least a real access achieves; clamping there keeps
// 1/efficiency finite when a stage that moves nothing reports 0.
constexpr double kMinEfficiency = 1.0 / 128.0;
// idle_lane_wastage < 1 by definition; 31/32 (one live lane per warp) is the
// most it can be for a stage that runs at all.
constexpr double kMaxIdleLaneWastage = 31.0 / 32.0;

double inv_eff(double e) {
    return 1.0 / std::max(e, kMinEfficiency);
}
} // namespace

void compute_cost_terms(const ScheduleFeatures &f, const FormulaContext &ctx, CostTerms &t) {
    using F = ScheduleFeature;
    const bool inlined = f[F::inlined_calls] > 0;
    const double num_scalars = f[F::num_scalars];
    const double num_blocks = f[F::num_blocks];
    const double num_threads = num_blocks * f[F::num_threads_per_block];
    // An inlined Func's row is one block of one thread (docs/features.md,
    // "Inlined Funcs"), so appendix B's num_threads x points_per_thread is
    // its total call count only if the featurizer also put the calls in
    // points_computed_per_thread; points_computed_total always holds them.
    const double points_computed =
        inlined ? f[F::points_computed_total] : num_threads * f[F::points_computed_per_thread];

    // idle_core_wastage = ceil(tasks_per_core) / max(1, tasks_per_core) with
    // num_cores = one wave of resident blocks (see FormulaContext). A stage
    // with no task count (0) is treated as one task so its compute cost
    // is not zeroed.
    const double resident_per_sm =
        std::clamp(f[F::max_block_occupancy] * ctx.max_blocks_per_sm, 1.0, ctx.max_blocks_per_sm);
    const double wave = ctx.sm_count * resident_per_sm;
    const double tasks_per_core = std::max(f[F::num_tasks], 1.0) / wave;
    const double idle_core_wastage = std::ceil(tasks_per_core) / std::max(1.0, tasks_per_core);
    const double lane_factor =
        inlined ? 1.0 : 1.0 / (1.0 - std::min(f[F::idle_lane_wastage], kMaxIdleLaneWastage));

    const double compute_scalars = num_scalars * idle_core_wastage * lane_factor;
    const double compute_points = points_computed * idle_core_wastage * lane_factor;
    t.fill(0.0);
    t[1] = inlined ? 0.0 : compute_scalars;
    t[3] = inlined ? compute_scalars : 0.0;
    t[19] = inlined ? 0.0 : compute_points;
    t[4] = inlined ? compute_points : 0.0;

    const double r = f[F::num_realizations];
    t[5] = r * f[F::unique_global_lines_read_per_realization];
    t[16] = r * f[F::unique_shared_lines_read_per_realization];
    t[8] = r * f[F::unique_register_lines_read_per_realization];
    t[6] = r * f[F::unique_global_bytes_read_per_realization];
    t[20] = r * f[F::unique_shared_bytes_read_per_realization];
    t[7] = r * f[F::unique_register_bytes_read_per_realization];
    t[18] = r * f[F::unique_global_lines_read_per_thread];
    t[17] = r * f[F::unique_shared_lines_read_per_thread];
    t[2] = r * f[F::unique_register_lines_read_per_thread];
    t[13] = r * f[F::unique_global_bytes_read_per_thread];
    t[11] = r * f[F::unique_shared_bytes_read_per_thread];
    t[0] = r * f[F::unique_register_bytes_read_per_thread];
    t[10] = num_scalars * f[F::unique_bytes_read_per_point];
    t[12] = num_scalars * f[F::unique_lines_read_per_point];
    t[14] = f[F::num_tasks] * f[F::unique_bytes_read_per_task];
    t[15] = f[F::num_tasks] * f[F::unique_lines_read_per_task];

    t[27] = num_blocks * f[F::num_global_mem_loads_per_block] *
            (inlined ? 1.0 : inv_eff(f[F::global_mem_load_efficiency]));
    t[28] = num_blocks * f[F::num_shared_mem_loads_per_block] *
            (inlined ? 1.0 : inv_eff(f[F::shared_mem_load_efficiency]));
    t[29] = num_blocks * f[F::num_shared_mem_stores_per_block];
    t[21] = num_blocks * f[F::num_global_mem_stores_per_block] *
            (inlined ? 1.0 : inv_eff(f[F::global_mem_store_efficiency]));

    const double inner_parallelism = f[F::inner_parallelism];
    t[22] = inner_parallelism > 1 ? num_scalars / std::max(1.0, f[F::global_innermost_bytes_at_task]) : 0.0;
    t[24] = r;
    t[25] = inner_parallelism > 1 ? f[F::num_productions] : 0.0;
    // (inner_parallelism - 1) clamped at 0: a stage with no parallelism
    // reported (0) must not get a negative cost.
    t[26] = f[F::num_productions] * std::max(inner_parallelism - 1.0, 0.0);
    t[9] = f[F::working_set];
    t[23] = num_threads * f[F::working_set_at_thread];

    // The serial chain (formula 2, costmodel/serial_chain.h). An inlined
    // Func's calls run in its consumers' chains, already counted there.
    if (ctx.version >= 2 && !inlined) {
        const SerialChain chain = serial_chain(f, f[F::points_computed_total], wave);
        const bool loads = f[F::num_global_mem_loads_per_block] + f[F::num_shared_mem_loads_per_block] > 0;
        t[30] = loads ? chain.waves * chain.load_steps : 0.0;
        t[31] = chain.waves * chain.points_per_thread;
    }

    for (int i = 0; i < kNumCoefficients; ++i)
        t[i] *= kTermUnitMs[i];
}

double fixed_stage_cost_ms(const ScheduleFeatures &f, const AtomicStore &store, const FormulaContext &ctx) {
    if (ctx.version < 3 || f[ScheduleFeature::inlined_calls] > 0) return 0;
    return atomic_contention_ms(f, store);
}

} // namespace gpusched
