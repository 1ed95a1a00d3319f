#pragma once
// Fast batched inference of the cost-model network (network_weights.h) plus
// the appendix B formula (cost_formula.h): stage rows in, per-stage costs
// (predicted ms) out.
//
// The pipeline head depends only on the stage, not on the schedule, so
// set_pipeline() runs it once per stage and folds its contribution to the
// coefficient layer into a per-stage bias (Wc[:, :8] * h1 + bc). A stage
// evaluation is then 75 fast logs, a 75x24 and a 24x32 matrix-vector product
// in float, 32 fast softplus, and the 32-term dot product with the formula
// terms in double, plus the formula's fixed part (its atomic contention).
//
// Invariants: rows are evaluated independently (batching never changes a
// result); stage ids passed to evaluate_rows() index the vector given to
// the last set_pipeline() (checked: std::out_of_range otherwise).

#include <cstddef>
#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/network_weights.h"

namespace gpusched {

class NetworkEvaluator {
public:
    // Throws std::invalid_argument if the weights have the wrong shape.
    NetworkEvaluator(const NetworkWeights &weights, const FormulaContext &ctx);

    void set_pipeline(const std::vector<PipelineFeatures> &stages);
    std::size_t num_stages() const { return stage_bias_.size() / kNumCoefficients; }

    // stage_costs[i] = cost of rows[i] as stage stage_ids[i]. Optionally
    // writes the 32 coefficients of each row to coefficients (n x 32).
    void evaluate_rows(const int *stage_ids, const ScheduleFeatures *const *rows, std::size_t n,
                       double *stage_costs, float *coefficients = nullptr) const;

    const FormulaContext &context() const { return ctx_; }

private:
    FormulaContext ctx_;
    NetworkWeights weights_;
    std::vector<float> schedule_wt_;         // [feature][embedding]: transposed for the inner loop
    std::vector<float> coef_wt_;             // [schedule embedding][coefficient]
    std::vector<float> stage_bias_;          // [stage][coefficient]
    std::vector<AtomicStore> atomic_stores_; // [stage]: for the formula's fixed part
};

} // namespace gpusched
