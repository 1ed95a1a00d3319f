#pragma once
// Training data with a known answer, for the training tests: runtimes made
// by hidden coefficients in the model's own structure.

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/training.h"
#include "fixtures.h"

namespace gpusched::test {

// Ground truth with the model's own structure: runtime = sum over rows of
// sum_i c*_i x term_i, where the hidden coefficients c*_i are positive and
// depend on the stage's arithmetic (so the pipeline head has something to
// learn). The network starts with all coefficients ~1, far from c*.
inline std::vector<PipelineSamples> known_structure_data(int pipelines, int states_per_pipeline,
                                                         std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const GpuProfile g = h100();
    const FormulaContext ctx = formula_context_for(g);
    std::array<double, kNumCoefficients> base{};
    // Log-uniform over two decades: far enough from the initial all-ones
    // coefficients that the untrained model ranks poorly.
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto &c : base)
        c = std::pow(10.0, d(rng));
    std::vector<PipelineSamples> data;
    for (int p = 0; p < pipelines; ++p) {
        const auto sp = random_synthetic_pipeline(rng);
        PipelineSamples ps;
        ps.name = "known " + std::to_string(p);
        ps.stages = sp.stages;
        for (int s = 0; s < states_per_pipeline; ++s) {
            StateFeatures st = random_synthetic_state(sp, g, rng);
            double runtime = 0;
            for (std::size_t r = 0; r < st.schedule.size(); ++r) {
                CostTerms t;
                compute_cost_terms(st.schedule[r], ctx, t);
                const double arith = sp.stages[static_cast<std::size_t>(st.stage_ids[r])].op(
                    OpType::Add, ScalarTypeBucket::Float);
                for (int i = 0; i < kNumCoefficients; ++i)
                    runtime += base[i] * (1.0 + 0.1 * arith) * t[i];
            }
            ps.states.push_back(std::move(st));
            ps.runtimes_ms.push_back(runtime);
        }
        data.push_back(std::move(ps));
    }
    return data;
}

} // namespace gpusched::test
