#include "tuner/modes/oneshot.h"

#include <chrono>

#include "db/sample_store.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/generate/sample_selection.h"

namespace gpusched {

OneShotResult run_oneshot(const OneShotOptions &opt, const ProgressFn &progress,
                          const ValidationProgressFn &progress_validation) {
    const auto t0 = std::chrono::steady_clock::now();

    // --- Validate everything before doing any work or writing anything.
    const BatchInputs inputs = check_batch_inputs(opt);
    const ScheduleSource *source = &inputs.source;
    // Opening validates the file (not SQLite, other application, newer schema)
    // before minutes of searching.
    db::Database database = db::Database::open(opt.db_path);

    OneShotResult result;
    result.db_path = opt.db_path;
    result.target = inputs.target;
    const int n = inputs.samples;

    // --- Run the samples, --jobs at a time.
    result.samples = generate_batch(opt, inputs, progress);

    // --- Choose.
    std::vector<SelectionCandidate> candidates = selection_candidates(result.samples);
    result.ranking = rank_by_prediction(candidates);
    result.best = choose_sample(candidates);

    // --- Validate. A schedule that changes the output is never kept: it is
    // marked and the choice is made again among the rest.
    auto validate = [&](OneShotSample &s) {
        ValidationRequest vr;
        vr.generator_path = opt.generator_path;
        vr.generator_name = opt.generator_name;
        vr.generator_params = opt.generator_params;
        vr.source = *source;
        vr.work_dir = s.dir + "/validate";
        vr.runtime_cache_dir = opt.output_dir + "/runtime";
        vr.timeout = opt.timeout;
        if (source->searches) {
            vr.plugin_config = nlohmann::json::parse(read_text_file(s.dir + "/config.json"), nullptr, false);
            vr.replay_record = s.dir + "/" + opt.generator_name + ".gpusched.json";
        }
        ValidationReport report = validate_schedule_on_pocl(vr);
        s.validation = to_string(report.status);
        s.validation_detail = report.detail;
        if (progress_validation) progress_validation(s, report);
        return report.status;
    };
    if (opt.validate_every_sample) {
        // Fuzzing: every compiled sample, not only the one kept.
        for (std::size_t i = 0; i < result.samples.size(); ++i) {
            if (candidates[i].usable && validate(result.samples[i]) == ValidationStatus::Failed)
                candidates[i].usable = false;
        }
        result.best = choose_sample(candidates);
    }
    while (opt.validate && !opt.validate_every_sample && result.best) {
        if (validate(result.samples[*result.best]) != ValidationStatus::Failed) break;
        candidates[*result.best].usable = false;
        result.best = choose_sample(candidates);
    }
    if (!result.best) {
        // Nothing usable: report the first failure, store nothing.
        for (const auto &s : result.samples) {
            if (!s.generator.ok()) throw UserError(s.generator.message);
            if (s.ptxas.status == PtxasStatus::Failed)
                throw UserError("ptxas rejected the generated PTX: " + s.ptxas.detail);
            if (s.validation == "failed")
                throw UserError("every usable schedule changed the pipeline's output on POCL; first: " +
                                s.validation_detail);
        }
        throw UserError("no usable sample");
    }

    // --- Keep the best sample's files at the top of the output directory.
    result.best_files = copy_sample_files(result.samples[*result.best], opt.generator_name, opt.output_dir);

    // --- Record the run in one transaction.
    db::SampleStore store(database);
    const nlohmann::json run_config = batch_run_config(opt, n);
    database.transaction([&] {
        db::RunInfo run;
        run.pipeline_id = store.upsert_pipeline(pipeline_identity(opt, result.target));
        run.mode = "oneshot";
        run.autoscheduler = opt.schedule_source;
        run.config = run_config.dump();
        run.gpusched_version = opt.gpusched_version;
        result.run_id = store.start_run(run);
        std::optional<int64_t> best_id;
        for (std::size_t i = 0; i < result.samples.size(); ++i) {
            const OneShotSample &s = result.samples[i];
            int64_t id = store.add_sample(result.run_id, to_sample_row(s, sample_search_config(opt, s)));
            if (i == *result.best) best_id = id;
        }
        store.finish_run(result.run_id, "finished", best_id);
    });
    result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

} // namespace gpusched
