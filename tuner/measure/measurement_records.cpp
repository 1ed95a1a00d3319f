#include "tuner/measure/measurement_records.h"

namespace gpusched {

// The validation request that names a schedule of this pipeline: what the
// reference and every benchmark build start from.
ValidationRequest schedule_request(const OneShotOptions &opt, const ScheduleSource &source,
                                   const std::string &work_dir) {
    ValidationRequest vr;
    vr.generator_path = opt.generator_path;
    vr.generator_name = opt.generator_name;
    vr.generator_params = opt.generator_params;
    vr.source = source;
    vr.work_dir = work_dir;
    vr.runtime_cache_dir = opt.output_dir + "/runtime";
    vr.timeout = opt.timeout;
    return vr;
}

ExecutorOptions executor_options(ExecutorOptions e, DeviceKind device, const TimingOptions &timing,
                                 const GpuProfile &gpu) {
    e.device = device;
    e.timing = timing;
    e.fallback_device_name = gpu.description;
    return e;
}

db::MeasurementRow measurement_row(const Measurement &m, const ExecutionRecord &execution) {
    db::MeasurementRow row;
    row.device = m.device;
    row.benchmark = to_string(m.outcome);
    row.runtime_min_ms = m.min_ms;
    row.runtime_median_ms = m.median_ms;
    if (m.measured()) row.runtime_reps = m.reps;
    row.validation = m.validation;
    row.validation_detail = m.validation_detail;
    row.status = m.measured() ? "ok" : (m.outcome == MeasureOutcome::TimedOut ? "timeout" : "failed");
    row.error = m.error;
    nlohmann::json detail = m.to_json();
    if (!execution.is_null()) detail["execution"] = execution;
    row.detail = detail.dump();
    return row;
}

// The measurement of something that never reached the device.
Measurement not_benchmarked(const std::string &label, const std::string &device, DeviceKind kind,
                            MeasureOutcome outcome, const std::string &error) {
    Measurement m;
    m.label = label;
    m.device = device;
    m.device_kind = kind;
    m.outcome = outcome;
    m.error = error;
    return m;
}

BenchmarkBuildRequest sample_build_request(const OneShotOptions &opt, const BatchInputs &inputs,
                                           const OneShotSample &s, DeviceKind device,
                                           const std::string &benchmark_target, const std::string &dir) {
    BenchmarkBuildRequest req;
    req.label = "sample " + std::to_string(s.index);
    req.target = benchmark_target;
    req.work_dir = dir + "/build";
    req.schedule = schedule_request(opt, inputs.source, dir);
    req.schedule.plugin_config =
        nlohmann::json::parse(read_text_file(s.dir + "/config.json"), nullptr, false);
    req.schedule.replay_record = s.dir + "/" + opt.generator_name + ".gpusched.json";
    if (benchmarks_the_batch_library(device)) req.library_dir = s.dir;
    return req;
}

} // namespace gpusched
