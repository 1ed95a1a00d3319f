#include "core/gpu_fill.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/loop_nest.h"
#include "costmodel/analytic_cost_model.h"

namespace gpusched {

namespace {

std::string stage_name(const FunctionDAG &dag, int node, int stage) {
    return dag.nodes[node].stable_name + (stage == 0 ? "" : ".update(" + std::to_string(stage - 1) + ")");
}

} // namespace

GpuFill gpu_fill(const FunctionDAG &dag, const Decisions &decisions, const StateFeatures &features,
                 const GpuProfile &gpu) {
    using F = ScheduleFeature;
    // Each stage's instructions, by dense stage id, from its featurization.
    std::vector<const Stage *> by_id(dag.num_stages(), nullptr);
    for (int n = 0; n < static_cast<int>(dag.nodes.size()); n++)
        for (int s = 0; s < static_cast<int>(dag.nodes[n].stages.size()); s++)
            by_id[dag.stage_id(n, s)] = &dag.nodes[n].stages[s];
    std::vector<double> work_of_stage(by_id.size(), 0.0); // 0: inlined or not featurized
    for (std::size_t i = 0; i < features.stage_ids.size(); i++) {
        const ScheduleFeatures &f = features.schedule[i];
        if (f[F::inlined_calls] > 0) continue;
        const int id = features.stage_ids[i];
        work_of_stage.at(id) = f[F::points_computed_total] * instructions_per_point(by_id.at(id)->features);
    }

    GpuFill out;
    out.capacity_threads = static_cast<double>(gpu.sm_count) * gpu.max_threads_per_sm;
    const LoopNest nest(dag, decisions);
    std::vector<double> work(nest.kernels.size(), 0.0);
    double total_work = 0;
    for (std::size_t k = 0; k < nest.kernels.size(); k++) {
        const Kernel &kernel = nest.kernels[k];
        KernelFill kf;
        kf.kernel = stage_name(dag, kernel.node, kernel.stage);
        kf.threads = static_cast<double>(std::max<int64_t>(kernel.num_blocks, 1)) *
                     static_cast<double>(std::max<int64_t>(kernel.threads_per_block, 1));
        kf.fill = std::min(1.0, kf.threads / out.capacity_threads);
        for (int s : kernel.stages) {
            const ScheduledStage &ss = nest.stages[s];
            kf.stages.push_back(stage_name(dag, ss.node, ss.stage));
            work[k] += work_of_stage.at(dag.stage_id(ss.node, ss.stage));
        }
        total_work += work[k];
        out.kernels.push_back(std::move(kf));
    }
    if (total_work <= 0) return out;
    out.weighted = 0;
    for (std::size_t k = 0; k < out.kernels.size(); k++) {
        KernelFill &kf = out.kernels[k];
        kf.work_share = work[k] / total_work;
        out.weighted += kf.work_share * kf.fill;
        if (kf.work_share >= GpuFill::kSignificantShare && kf.fill < out.least) {
            out.least = kf.fill;
            out.least_kernel = kf.kernel;
        }
    }
    return out;
}

nlohmann::json gpu_fill_to_json(const GpuFill &fill) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const KernelFill &k : fill.kernels)
        kernels.push_back({{"kernel", k.kernel},
                           {"stages", k.stages},
                           {"threads", k.threads},
                           {"fill", k.fill},
                           {"work_share", k.work_share}});
    return {{"capacity_threads", fill.capacity_threads},
            {"weighted", fill.weighted},
            {"least", fill.least},
            {"least_kernel", fill.least_kernel},
            {"kernels", kernels}};
}

} // namespace gpusched
