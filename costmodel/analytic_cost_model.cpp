#include "costmodel/analytic_cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "costmodel/atomic_contention.h"
#include "costmodel/serial_chain.h"

namespace gpusched {
namespace {

// Global memory is moved in 32-byte sectors (CUDA C Programming Guide,
// "Device Memory Accesses", compute capability 5.x and later); the feature
// definitions (docs/features.md) count global transactions in sectors.
constexpr double kGlobalTransactionBytes = 32;
// L2 bandwidth relative to DRAM: ~2.9x measured on V100 (Jia et al. 2018,
// "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking":
// 2155 GB/s L2 vs 750 GB/s DRAM). Used for every GPU: a modeling assumption.
constexpr double kL2ToDramBandwidth = 2.9;
// SM clock for shared-memory wavefront rates: boost clocks are 1530 MHz
// (V100), 1410 MHz (A100), 1980 MHz (H100 SXM) per the NVIDIA whitepapers;
// the profile carries no clock, so take 1.5 GHz. One wavefront per SM per clock.
constexpr double kSmClockGHz = 1.5;
// Warps per SM needed to hide latency. Arithmetic: 4 schedulers x ~2 warps
// (dependent-issue latency ~4 cycles, Jia et al. 2018). Memory: Little's law
// with ~600 ns DRAM latency at full bandwidth needs ~30 warps' worth of
// loads in flight per SM on an H100-class GPU. Both are modeling estimates.
constexpr double kWarpsToHideArithmetic = 8;
constexpr double kWarpsToHideMemory = 32;
// Kernel-to-kernel overhead of back-to-back launches in one stream: a few
// microseconds on current drivers. A modeling constant, not a datasheet value.
constexpr double kLaunchMs = 0.003;
// A __syncthreads round with its stall, per block-level production: ~100 ns.
constexpr double kBarrierMs = 1e-4;
// FP64 runs at half the FP32 rate on V100/A100/H100 (whitepapers).
constexpr double kDoubleOpCost = 2;
// Integer division/modulo and transcendental calls expand to many
// instructions (division ~20 integer ops; libdevice exp/log ~16).
constexpr double kDivModCost = 20;
constexpr double kExternCallCost = 16;
constexpr double kSoftRooflinePower = 4;
// Latency of one load a thread waits for: ~200 cycles for an L2 hit, ~600
// for DRAM, ~30 for shared memory (Jia et al. 2018 measured 193 / 375-1029 /
// 19 cycles on V100), at kSmClockGHz. Modeling estimates, not datasheet values.
constexpr double kL2LatencyNs = 200 / kSmClockGHz;
constexpr double kDramLatencyNs = 600 / kSmClockGHz;
constexpr double kSharedLatencyNs = 30 / kSmClockGHz;

void require_positive(double v, const char *field, const GpuProfile &p) {
    if (!(v > 0))
        throw std::runtime_error("analytic cost model: GPU profile \"" + p.name + "\" has no usable " +
                                 field + " (got " + std::to_string(v) + ")");
}

} // namespace

double instructions_per_point(const PipelineFeatures &p) {
    double total = 0;
    for (int op = 0; op < kNumOpTypes; ++op) {
        const auto o = static_cast<OpType>(op);
        // Constants, variables, params and lets are operands, not instructions.
        if (o == OpType::Const || o == OpType::Variable || o == OpType::Param || o == OpType::Let) continue;
        double weight = 1;
        if (o == OpType::Div || o == OpType::Mod) weight = kDivModCost;
        if (o == OpType::ExternCall) weight = kExternCallCost;
        for (int t = 0; t < kNumScalarTypes; ++t) {
            const double type_weight = t == static_cast<int>(ScalarTypeBucket::Double) ? kDoubleOpCost : 1.0;
            total += weight * type_weight * p.op(o, static_cast<ScalarTypeBucket>(t));
        }
    }
    return std::max(total + 1.0, 1.0); // + the store
}

AnalyticGpuCostModel::AnalyticGpuCostModel(GpuProfile profile) : profile_(std::move(profile)) {
    require_positive(profile_.sm_count, "sm_count", profile_);
    require_positive(profile_.max_blocks_per_sm, "max_blocks_per_sm", profile_);
    require_positive(profile_.max_warps_per_sm, "max_warps_per_sm", profile_);
    require_positive(profile_.registers_per_sm, "registers_per_sm", profile_);
    require_positive(profile_.max_threads_per_sm, "max_threads_per_sm", profile_);
    require_positive(static_cast<double>(profile_.l2_cache_bytes), "l2_cache_bytes", profile_);
    require_positive(profile_.memory_bandwidth_gb_per_s, "memory_bandwidth_gb_per_s", profile_);
    require_positive(profile_.fp32_tflops, "fp32_tflops", profile_);
}

void AnalyticGpuCostModel::set_pipeline(std::vector<PipelineFeatures> stage_features) {
    instructions_per_point_.clear();
    atomic_stores_.clear();
    for (const auto &p : stage_features) {
        instructions_per_point_.push_back(instructions_per_point(p));
        atomic_stores_.push_back(atomic_store_of(p));
    }
}

AnalyticStageCost AnalyticGpuCostModel::stage_cost(const ScheduleFeatures &f, int stage_id) const {
    using F = ScheduleFeature;
    if (stage_id < 0 || static_cast<std::size_t>(stage_id) >= instructions_per_point_.size())
        throw std::out_of_range("analytic cost model: stage id " + std::to_string(stage_id) +
                                " outside the pipeline's " + std::to_string(instructions_per_point_.size()) +
                                " stages (was set_pipeline called?)");
    const GpuProfile &g = profile_;
    AnalyticStageCost c;
    const bool inlined = f[F::inlined_calls] > 0;

    // Points: the total trip count; features from a featurizer that leaves it
    // at 0 fall back on the product of the loop extents.
    const double points = f[F::points_computed_total] > 0 ? f[F::points_computed_total] : f[F::num_scalars];
    const double lane_util =
        std::clamp(f[F::warp_lane_utilization] > 0 ? f[F::warp_lane_utilization] : 1.0, 1.0 / 32, 1.0);
    const double warp_instructions = points * instructions_per_point_[stage_id] / (32.0 * lane_util);
    // FP32 FLOP/s = lanes x 2 (FMA) x clock, so warp instructions/ms = TFLOPS x 1e12 / 64 / 1e3.
    const double warp_instr_per_ms = g.fp32_tflops * 1e9 / 64.0;

    if (inlined) {
        // An inlined Func's row (docs/features.md, "Inlined Funcs"): its
        // arithmetic runs once per call inside its consumers' threads, and
        // that is all it costs: its loads are in its consumers' rows, and
        // it stores nothing (no + 1 for the store), so a Func that only
        // forwards a value costs its one load instruction. Its block,
        // thread and occupancy features are placeholders (1 block of 1
        // thread), not its consumers' residency, so no latency hiding,
        // waves or launches here.
        const double inlined_instructions = std::max(instructions_per_point_[stage_id] - 1.0, 0.0);
        c.compute_ms = points * inlined_instructions / 32.0 / warp_instr_per_ms;
        c.kernel_ms = c.compute_ms;
        c.total_ms = c.compute_ms;
        return c;
    }

    // Residency and waves.
    const double blocks = std::max(f[F::num_blocks], 1.0);
    const double blocks_per_sm = std::clamp(f[F::max_block_occupancy] * g.max_blocks_per_sm, 1.0,
                                            static_cast<double>(g.max_blocks_per_sm));
    const double warps_per_sm =
        f[F::max_warp_occupancy] > 0
            ? std::min(f[F::max_warp_occupancy] * g.max_warps_per_sm, double(g.max_warps_per_sm))
            : std::min(blocks_per_sm * std::max(f[F::num_warps_per_block], 1.0), double(g.max_warps_per_sm));
    const double wave = g.sm_count * blocks_per_sm;
    c.tail_factor = std::ceil(blocks / wave) * wave / blocks;
    const double hide_arith = std::min(1.0, std::max(warps_per_sm, 1.0) / kWarpsToHideArithmetic);
    const double hide_mem = std::min(1.0, std::max(warps_per_sm, 1.0) / kWarpsToHideMemory);

    c.compute_ms = warp_instructions / (warp_instr_per_ms * hide_arith);

    // Global memory: everything goes through L2; the footprint misses to DRAM,
    // and reuse beyond the footprint misses too in proportion to how far the
    // footprint overflows L2.
    const double l2_load_bytes = blocks * f[F::num_global_mem_loads_per_block] * kGlobalTransactionBytes;
    const double store_bytes = blocks * f[F::num_global_mem_stores_per_block] * kGlobalTransactionBytes;
    const double load_eff = std::max(f[F::global_mem_load_efficiency], 1.0 / 128);
    const double footprint = std::min(
        l2_load_bytes, f[F::num_realizations] * f[F::unique_global_bytes_read_per_realization] / load_eff);
    const double miss = std::clamp(footprint / static_cast<double>(g.l2_cache_bytes), 0.0, 1.0);
    const double dram_load_bytes = footprint + (l2_load_bytes - footprint) * miss;
    const double bytes_per_ms = g.memory_bandwidth_gb_per_s * 1e6;
    const double l2_ms = (l2_load_bytes + store_bytes) / (kL2ToDramBandwidth * bytes_per_ms);
    const double dram_ms = (dram_load_bytes + store_bytes) / bytes_per_ms;
    c.global_memory_ms = std::max(l2_ms, dram_ms) / hide_mem;

    const double wavefronts =
        blocks * (f[F::num_shared_mem_loads_per_block] + f[F::num_shared_mem_stores_per_block]);
    c.shared_memory_ms = wavefronts / (g.sm_count * kSmClockGHz * 1e6) / hide_arith;

    // Serial latency (costmodel/serial_chain.h): a wave of blocks takes at
    // least one thread's chain, issuing at most one instruction per clock
    // and waiting on its loads.
    const SerialChain chain = serial_chain(f, points, wave);
    double load_latency_ns = 0;
    if (l2_load_bytes > 0) {
        const double from_dram = std::clamp(dram_load_bytes / l2_load_bytes, 0.0, 1.0);
        load_latency_ns = from_dram * kDramLatencyNs + (1 - from_dram) * kL2LatencyNs;
    } else if (f[F::num_shared_mem_loads_per_block] > 0) {
        load_latency_ns = kSharedLatencyNs;
    }
    const double chain_ns = chain.points_per_thread * instructions_per_point_[stage_id] / kSmClockGHz +
                            chain.load_steps * load_latency_ns;
    c.serial_latency_ms = chain.waves * chain_ns * 1e-6;

    // Atomic contention (costmodel/atomic_contention.h): updates of a
    // stored point spread over threads wait for each other at its line.
    c.atomic_contention_ms = atomic_contention_ms(f, atomic_stores_[stage_id]);

    const double p = kSoftRooflinePower;
    const double roof = std::pow(std::pow(c.compute_ms, p) + std::pow(c.global_memory_ms, p) +
                                     std::pow(c.shared_memory_ms, p),
                                 1.0 / p);
    c.kernel_ms = std::pow(std::pow(roof * c.tail_factor, p) + std::pow(c.serial_latency_ms, p) +
                               std::pow(c.atomic_contention_ms, p),
                           1.0 / p);

    // A stage produced once is a kernel of its own (compute_root); one
    // produced many times lives inside a kernel at block level and pays a
    // barrier per production, spread over the blocks resident at once.
    const double productions = f[F::num_productions];
    if (productions <= 1.0) {
        c.launch_ms = kLaunchMs;
    } else {
        c.barrier_ms = productions * kBarrierMs / wave;
    }

    // Register spills: the per-thread working set (bytes) plus the registers
    // the expression tree needs, beyond the per-thread share of the register
    // file at this residency (capped at the ISA limit), spills to local memory:
    // one store and one load per point through L2.
    const double threads_per_sm = std::max(warps_per_sm * 32.0, 32.0);
    const double regs_available =
        std::min(static_cast<double>(g.max_registers_per_thread), g.registers_per_sm / threads_per_sm);
    const double regs_needed = f[F::working_set_at_thread] / 4.0 + f[F::expr_branching];
    const double spilled_bytes_per_point = std::max(regs_needed - regs_available, 0.0) * 4.0;
    c.spill_ms = 2.0 * spilled_bytes_per_point * points / (kL2ToDramBandwidth * bytes_per_ms);

    c.total_ms = c.kernel_ms + c.launch_ms + c.barrier_ms + c.spill_ms;
    return c;
}

void AnalyticGpuCostModel::evaluate(const std::vector<const StateFeatures *> &states,
                                    std::vector<double> &costs, std::vector<std::vector<double>> *per_stage) {
    costs.assign(states.size(), 0.0);
    if (per_stage) per_stage->assign(states.size(), {});
    for (std::size_t s = 0; s < states.size(); ++s) {
        const StateFeatures &st = *states[s];
        if (st.stage_ids.size() != st.schedule.size())
            throw std::invalid_argument("analytic cost model: state has " +
                                        std::to_string(st.stage_ids.size()) + " stage ids but " +
                                        std::to_string(st.schedule.size()) + " feature rows");
        double total = 0;
        for (std::size_t i = 0; i < st.schedule.size(); ++i) {
            const double c = stage_cost(st.schedule[i], st.stage_ids[i]).total_ms;
            total += c;
            if (per_stage) (*per_stage)[s].push_back(c);
        }
        // A state with no stages yet costs nothing; keep the interface's
        // "> 0" promise with the smallest positive cost.
        costs[s] = std::max(total, 1e-12);
    }
}

} // namespace gpusched
