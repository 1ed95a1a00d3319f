#include "tuner/modes/baselines.h"

#include "common/errors.h"
#include "tuner/measure/measurement_records.h"
#include "tuner/measure/runner/device_traits.h"

namespace gpusched {

std::vector<ScheduleSource> baseline_sources(const std::vector<std::string> &names) {
    std::vector<ScheduleSource> sources;
    for (const auto &name : names) {
        auto src = find_schedule_source(name);
        if (!src || src->searches) {
            std::string known;
            for (const auto &n : schedule_source_names())
                if (n != "gpusched") known += (known.empty() ? "" : ", ") + n;
            const std::string why = schedule_source_unavailable(name);
            if (!why.empty() && why.rfind("unknown", 0) != 0)
                throw UserError("baseline '" + name + "': " + why + " (baselines here: " + known + ")");
            throw UserError("unknown baseline '" + name + "' (known: " + known + ")");
        }
        sources.push_back(*src);
    }
    return sources;
}

BaselineBuild build_baseline(const OneShotOptions &batch, const ScheduleSource &source, DeviceKind device,
                             const std::string &benchmark_target, const std::string &dir,
                             const std::function<void(const OneShotSample &)> &store,
                             const std::function<std::string()> &reference_dir) {
    BaselineBuild out;
    OneShotOptions b = batch;
    b.schedule_source = source.name;
    b.output_dir = dir;
    const BatchInputs inputs = check_batch_inputs(b);
    out.schedule = std::move(generate_batch(b, inputs).front());
    store(out.schedule);
    if (!out.schedule.compiled()) {
        out.build.error = out.schedule.generator.message;
        return out;
    }
    BenchmarkBuildRequest req;
    req.label = source.name;
    req.target = benchmark_target;
    req.work_dir = dir + "/build";
    req.schedule = schedule_request(batch, inputs.source, dir);
    if (benchmarks_the_batch_library(device)) req.library_dir = out.schedule.dir;
    req.reference_dir = reference_dir();
    out.build = build_benchmark(req);
    return out;
}

} // namespace gpusched
