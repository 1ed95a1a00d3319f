#pragma once
// The per-stage cost formula of Anderson et al. 2021, appendix B, split into
// the part the network does not learn (the terms) and the part it does (the
// coefficients). Every expression of appendix B is linear in the
// coefficients c_i, so a stage's cost is exactly
//
//     stage_cost = sum_i c_i * terms[i]        (i < kNumCoefficients)
//
// where terms[i] is everything appendix B multiplies c_i by (including the
// select()s on inlined_calls, the idle-core and idle-lane factors and the
// 1/efficiency factors). compute_cost_terms() evaluates those terms from one
// ScheduleFeatures row. docs/costmodel.md maps every term onto the features.
//
// Three coefficients that appendix B does not use (c23, c27, c28) are given
// terms so that 30 of the network's 32 outputs are used (the reference
// network's shape): c27 and c28 weight the global and shared load-transaction
// costs, which appendix B adds without a coefficient (their unit would
// otherwise be fixed at "one transaction = one unit of cost"), and c23 weights
// a register-pressure term (threads x per-thread working set), the "register
// pressure" part of the working-set cost that sec. 5.2 describes but the
// listed formula leaves out. Since formula version 2, c30 and c31 weight a
// thread's serial chain (issue 27), which appendix B has no term for: the
// waves of blocks times each thread's points one after another, c30 for the
// loads it waits on (a few in flight) and c31 for issuing them. Weights
// trained for version 1 have zero terms there (FormulaContext::version).
// Since version 3 a stage's cost also has a fixed part that no coefficient
// weighs: its atomic updates' contention (costmodel/atomic_contention.h),
// which is measured, not learned, and which no term's coefficient can
// stand in for (the updates' lines are not in the features). Weights trained
// for versions 1 and 2 predict without it, exactly as they did.
//
// Each term is multiplied by a fixed unit (kTermUnitMs) so that a coefficient
// of 1 means "about what this costs on a current datacenter GPU": the network
// then learns O(1) coefficients instead of values spread over twelve orders
// of magnitude, which plain Adam steps cannot reach.
//
// Invariants: for features obeying ScheduleFeatures' invariant (finite,
// >= 0), every term is finite and >= 0, so positive coefficients give a
// positive cost.

#include <array>

#include "costmodel/atomic_contention.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

struct GpuProfile;

inline constexpr int kNumCoefficients = 32; // the network's output width (reference network)
// 1: appendix B's terms, c0..c29 (c30, c31 zero); 2: + the serial chain
// (c30, c31); 3: + the fixed atomic-contention part. A weights file says
// which version its weights were trained for (docs/weights-format.md).
inline constexpr int kCostFormulaVersion = 3;

// What the formula needs from the GPU: appendix B's idle_core_wastage divides
// the tasks by "num_cores"; on a GPU the unit that runs tasks (blocks)
// concurrently is a wave: sm_count x resident blocks per SM.
struct FormulaContext {
    double sm_count = 80;              // V100, the paper's GPU, until a profile says otherwise
    double max_blocks_per_sm = 32;     // CUDA programming guide, CC 7.0-9.0
    int version = kCostFormulaVersion; // of the weights the terms are for
};

FormulaContext formula_context_for(const GpuProfile &profile);

using CostTerms = std::array<double, kNumCoefficients>;

// The fixed unit of each term, in milliseconds per unit of the raw term.
extern const std::array<double, kNumCoefficients> kTermUnitMs;

// terms[i] = kTermUnitMs[i] * (appendix-B factor multiplying c_i).
void compute_cost_terms(const ScheduleFeatures &f, const FormulaContext &ctx, CostTerms &terms);

// The part of a stage's cost no coefficient weighs (ms): 0 before version 3,
// then the stage's atomic contention. stage_cost = sum_i c_i * terms[i] + this.
double fixed_stage_cost_ms(const ScheduleFeatures &f, const AtomicStore &store, const FormulaContext &ctx);

} // namespace gpusched
