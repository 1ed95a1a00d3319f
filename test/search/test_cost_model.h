#pragma once
// A small deterministic cost model for the search tests (the real ones live in
// costmodel/). Cost of a stage: points computed plus memory transactions,
// scaled by how badly the kernel fills the GPU; it rewards coalescing, shared
// memory reuse and enough blocks, which is all the search tests need.

#include <cmath>

#include "costmodel/cost_model.h"

namespace test_support {

class TestCostModel : public gpusched::CostModel {
public:
    int batches = 0;
    void set_pipeline(std::vector<gpusched::PipelineFeatures> f) override { stages_ = f.size(); }
    void evaluate(const std::vector<const gpusched::StateFeatures *> &states, std::vector<double> &costs,
                  std::vector<std::vector<double>> *per_stage) override {
        using SF = gpusched::ScheduleFeature;
        batches++;
        costs.assign(states.size(), 0);
        if (per_stage) per_stage->assign(states.size(), {});
        for (size_t i = 0; i < states.size(); i++) {
            for (const gpusched::ScheduleFeatures &f : states[i]->schedule) {
                double blocks = std::max(1.0, f[SF::num_blocks]);
                double per_block =
                    f[SF::num_global_mem_loads_per_block] * 4 + f[SF::num_global_mem_stores_per_block] * 4 +
                    f[SF::num_shared_mem_loads_per_block] + f[SF::num_shared_mem_stores_per_block] +
                    f[SF::points_computed_total] / blocks * 0.1;
                double fill = std::min(1.0, blocks / 264.0) * std::max(0.05, f[SF::max_warp_occupancy]);
                double c = 1e-6 * (per_block * blocks / fill + 1000);
                costs[i] += c;
                if (per_stage) (*per_stage)[i].push_back(c);
            }
        }
    }

private:
    size_t stages_ = 0;
};

} // namespace test_support
