#include "core/gpu_fill.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "costmodel/analytic_cost_model.h"

namespace gpusched {

GpuFill gpu_fill(const FunctionDAG &dag, const StateFeatures &features, const GpuProfile &gpu) {
    using F = ScheduleFeature;
    std::vector<const Stage *> by_id(dag.num_stages(), nullptr);
    for (int n = 0; n < static_cast<int>(dag.nodes.size()); n++)
        for (int s = 0; s < static_cast<int>(dag.nodes[n].stages.size()); s++)
            by_id[dag.stage_id(n, s)] = &dag.nodes[n].stages[s];

    GpuFill out;
    out.capacity_threads = static_cast<double>(gpu.sm_count) * gpu.max_threads_per_sm;
    std::vector<double> work;
    double total_work = 0;
    for (std::size_t i = 0; i < features.stage_ids.size(); i++) {
        const ScheduleFeatures &f = features.schedule[i];
        if (f[F::inlined_calls] > 0) continue;
        const Stage &stage = *by_id.at(features.stage_ids[i]);
        StageFill s;
        s.stage = dag.nodes[stage.node].stable_name +
                  (stage.index == 0 ? "" : ".update(" + std::to_string(stage.index - 1) + ")");
        s.threads = std::max(f[F::num_blocks], 1.0) * std::max(f[F::num_threads_per_block], 1.0);
        s.fill = std::min(1.0, s.threads / out.capacity_threads);
        out.stages.push_back(s);
        work.push_back(f[F::points_computed_total] * instructions_per_point(stage.features));
        total_work += work.back();
    }
    if (total_work <= 0) return out;
    out.weighted = 0;
    for (std::size_t i = 0; i < out.stages.size(); i++) {
        StageFill &s = out.stages[i];
        s.work_share = work[i] / total_work;
        out.weighted += s.work_share * s.fill;
        if (s.work_share >= GpuFill::kSignificantShare && s.fill < out.least) {
            out.least = s.fill;
            out.least_stage = s.stage;
        }
    }
    return out;
}

nlohmann::json gpu_fill_to_json(const GpuFill &fill) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageFill &s : fill.stages)
        stages.push_back({{"stage", s.stage}, {"threads", s.threads}, {"fill", s.fill}, {"work_share", s.work_share}});
    return {{"capacity_threads", fill.capacity_threads},
            {"weighted", fill.weighted},
            {"least", fill.least},
            {"least_stage", fill.least_stage},
            {"stages", stages}};
}

} // namespace gpusched
