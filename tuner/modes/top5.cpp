#include "tuner/modes/top5.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>

#include "db/sample_store.h"
#include "tuner/generate/sample_selection.h"
#include "tuner/measure/measurement_records.h"
#include "tuner/measure/measuring_round.h"
#include "tuner/measure/runner/device_traits.h"
#include "tuner/measure/shared_reference.h"
#include "tuner/modes/baselines.h"

namespace gpusched {

namespace {

// The usable samples to benchmark, best predicted first (sec. 6.1): those
// that do not spill; if every one spills, those within 50% of the least
// spilling, as One Shot chooses.
std::vector<std::size_t> benchmark_candidates(const std::vector<OneShotSample> &samples,
                                              const std::vector<std::size_t> &ranking,
                                              std::vector<std::size_t> &spillers) {
    std::vector<std::size_t> keep;
    long least = -1;
    for (std::size_t i : ranking) {
        const long spill = samples[i].ptxas.total_spill_bytes();
        if (spill == 0)
            keep.push_back(i);
        else
            spillers.push_back(i);
        if (least < 0 || spill < least) least = spill;
    }
    if (!keep.empty() || ranking.empty()) return keep;
    for (std::size_t i : ranking) {
        if (static_cast<double>(samples[i].ptxas.total_spill_bytes()) <=
            kSpillTolerance * static_cast<double>(least))
            keep.push_back(i);
    }
    return keep;
}

std::string first_error(const std::vector<OneShotSample> &samples) {
    for (const auto &s : samples) {
        if (!s.generator.ok()) return s.generator.message;
        if (s.ptxas.status == PtxasStatus::Failed)
            return "ptxas rejected the generated PTX: " + s.ptxas.detail;
    }
    return "no usable sample";
}

// The run's config row: what decided its samples and how they were timed.
nlohmann::json top5_run_config(const Top5Options &options, const BatchInputs &inputs,
                               const Top5Result &result, const Executor &executor) {
    const OneShotOptions &opt = options.batch;
    nlohmann::json c = batch_run_config(opt, inputs.samples);
    c.update({
        {"device", to_string(options.device)},
        {"device_name", result.device},
        {"executor", executor.name()},
        {"top", options.top},
        {"baselines", options.baselines},
        {"benchmark_target", result.benchmark_target},
        {"timing", to_json(options.timing)},
    });
    if (!options.started_by.empty()) c["started_by"] = options.started_by;
    return c;
}

// One line on what the spill filter did to the chosen samples.
std::string spill_check_line(const Top5Result &result, const std::vector<std::size_t> &chosen) {
    const bool checked = std::any_of(chosen.begin(), chosen.end(), [&](std::size_t i) {
        return result.samples[i].ptxas.status == PtxasStatus::Checked;
    });
    if (!checked)
        return "not checked (" + result.samples[chosen.front()].ptxas.detail +
               "): samples that spill registers were not filtered out, so a spiller may be "
               "among those benchmarked; the measurements still decide";
    if (result.spillers.size() == result.ranking.size())
        return "every sample spills; benchmarking those within 50% of the least spilling";
    return "checked: " + std::to_string(result.spillers.size()) + " spilling sample" +
           (result.spillers.size() == 1 ? "" : "s") + " dropped";
}

// One Top 5 run: its database rows, its batch, and the measuring round of
// the chosen samples and the baselines.
class Top5Run {
public:
    Top5Run(const Top5Options &options, const Top5Progress &progress, Executor &executor,
            const BatchInputs &inputs, Top5Result &result)
        : options_(options), opt_(options.batch), progress_(progress), executor_(executor), inputs_(inputs),
          result_(result), database_(db::Database::open(opt_.db_path)), store_(database_) {}

    // The pipeline and the run first, so every sample can be written as it finishes.
    void start() {
        config_ = top5_run_config(options_, inputs_, result_, executor_);
        result_.run_id = start_run(opt_.schedule_source);
    }

    void fail(const std::string &error) {
        std::lock_guard<std::mutex> lock(db_mutex_);
        store_.finish_run(result_.run_id, "failed", std::nullopt, error);
    }

    void interrupted() {
        std::lock_guard<std::mutex> lock(db_mutex_);
        store_.finish_run(result_.run_id, "interrupted", std::nullopt, "interrupted while benchmarking");
    }

    // kept_source: the baseline whose sample is kept, if not one of the run's.
    void finish(int64_t best_sample_id, const std::string &kept_source = "") {
        std::lock_guard<std::mutex> lock(db_mutex_);
        database_.transaction([&] {
            store_.finish_run(result_.run_id, "finished", best_sample_id);
            if (!kept_source.empty()) store_.set_kept_source(result_.run_id, kept_source);
        });
    }

    // The batch, each sample stored as it finishes.
    void generate() {
        sample_ids_.assign(static_cast<std::size_t>(inputs_.samples), 0);
        std::exception_ptr db_failure;
        result_.samples = generate_batch(opt_, inputs_, [&](const OneShotSample &s, int done, int total) {
            try {
                std::lock_guard<std::mutex> lock(db_mutex_);
                sample_ids_[static_cast<std::size_t>(s.index)] =
                    store_.add_sample(result_.run_id, to_sample_row(s, sample_search_config(opt_, s)));
            } catch (...) {
                if (!db_failure) db_failure = std::current_exception();
            }
            if (progress_.sample) progress_.sample(s, done, total);
        });
        if (db_failure) std::rethrow_exception(db_failure);
    }

    // The entries to benchmark: the chosen samples, best predicted first, then the baselines.
    std::vector<Top5Entry> entries(const std::vector<std::size_t> &chosen,
                                   const std::vector<ScheduleSource> &baselines) const {
        std::vector<Top5Entry> out;
        for (std::size_t i : chosen) {
            const OneShotSample &s = result_.samples[i];
            Top5Entry e;
            e.label = "sample " + std::to_string(s.index);
            e.source = opt_.schedule_source;
            e.sample = i;
            e.predicted_rank = static_cast<int>(std::find(result_.ranking.begin(), result_.ranking.end(), i) -
                                                result_.ranking.begin()) +
                               1;
            e.predicted_cost = s.predicted_cost;
            e.ptxas_status = to_string(s.ptxas.status);
            e.spill_bytes = s.ptxas.total_spill_bytes();
            e.run_id = result_.run_id;
            e.sample_id = sample_ids_[i];
            out.push_back(std::move(e));
        }
        for (const ScheduleSource &src : baselines) {
            Top5Entry e;
            e.label = src.name;
            e.source = src.name;
            out.push_back(std::move(e));
        }
        return out;
    }

    // Builds and benchmarks every entry in one measuring round; each
    // measurement is stored as it comes. False when a stop ended it.
    bool measure(std::vector<Top5Entry> &entries) {
        const std::string bench_root = opt_.output_dir + "/benchmarks";
        SharedReference reference(schedule_request(opt_, inputs_.source, bench_root));
        RoundPlan plan;
        plan.scope = "run-" + std::to_string(result_.run_id);
        plan.items = entries.size();
        plan.jobs = opt_.jobs;
        plan.prepare = [&](std::size_t i) {
            Top5Entry &e = entries[i];
            build_entry(e, bench_root, reference);
            return after_build(key_of(e), e.label, e.build, reference.get(), result_.device, options_.device);
        };
        plan.measured = [&](std::size_t i, const Measurement &m, const ExecutionRecord &execution) {
            Top5Entry &e = entries[i];
            e.measurement = m;
            e.measurement.label = e.label;
            e.execution = execution;
            record(e);
        };
        const bool complete = run_measuring_round(executor_, plan);
        result_.reference_dir = reference.get().dir;
        return complete;
    }

private:
    int64_t start_run(const std::string &autoscheduler) {
        int64_t id = 0;
        std::lock_guard<std::mutex> lock(db_mutex_);
        database_.transaction([&] {
            db::RunInfo run;
            run.pipeline_id = store_.upsert_pipeline(pipeline_identity(opt_, inputs_.target));
            run.mode = "top5";
            run.autoscheduler = autoscheduler;
            run.config = config_.dump();
            run.gpusched_version = opt_.gpusched_version;
            id = store_.start_run(run);
        });
        return id;
    }

    std::string key_of(const Top5Entry &e) const {
        return "run " + std::to_string(result_.run_id) + " " +
               (e.sample ? "sample " + std::to_string(result_.samples[*e.sample].index)
                         : "baseline " + e.source);
    }

    // One build: a sample links its CUDA library (cuda) or is compiled again
    // for OpenCL with its decision record replayed; a baseline first runs as
    // a batch of one (CUDA library, ptxas, its own run row). A build that
    // fails is the entry's failure; the database's is the run's.
    void build_entry(Top5Entry &e, const std::string &bench_root, SharedReference &reference) {
        const std::string dir =
            bench_root + "/" + (e.sample ? std::to_string(result_.samples[*e.sample].index) : e.source);
        try {
            if (e.sample) {
                BenchmarkBuildRequest req =
                    sample_build_request(opt_, inputs_, result_.samples[*e.sample], options_.device,
                                         result_.benchmark_target, dir);
                req.label = e.label;
                req.reference_dir = reference.get().dir;
                e.build = build_benchmark(req);
                return;
            }
            BaselineBuild bb = build_baseline(
                opt_, *find_schedule_source(e.source), options_.device, result_.benchmark_target, dir,
                [&](const OneShotSample &schedule) {
                    e.run_id = start_run(e.source);
                    std::lock_guard<std::mutex> lock(db_mutex_);
                    e.sample_id =
                        store_.add_sample(e.run_id, to_sample_row(schedule, nlohmann::json::object()));
                },
                [&] { return reference.get().dir; });
            e.baseline = std::move(bb.schedule);
            e.ptxas_status = to_string(e.baseline.ptxas.status);
            e.spill_bytes = e.baseline.ptxas.total_spill_bytes();
            e.build = std::move(bb.build);
        } catch (const db::DbError &) {
            throw;
        } catch (const std::exception &err) {
            e.build.ok = false;
            e.build.error = err.what();
        }
    }

    // A measurement (or why there is none) onto the entry's row; a
    // baseline's own run ends with it.
    void record(Top5Entry &e) {
        if (e.sample_id != 0) {
            std::lock_guard<std::mutex> lock(db_mutex_);
            store_.record_measurement(e.sample_id, measurement_row(e.measurement, e.execution));
            if (!e.sample) {
                store_.finish_run(e.run_id, e.measured() ? "finished" : "failed",
                                  e.measured() ? std::optional<int64_t>(e.sample_id) : std::nullopt,
                                  e.measured() ? "" : e.measurement.error);
            }
        }
        if (progress_.measured) progress_.measured(e);
    }

    const Top5Options &options_;
    const OneShotOptions &opt_;
    const Top5Progress &progress_;
    Executor &executor_;
    const BatchInputs &inputs_;
    Top5Result &result_;
    db::Database database_;
    db::SampleStore store_;
    std::mutex db_mutex_;
    nlohmann::json config_;
    std::vector<int64_t> sample_ids_;
};

// The fastest measured entry's index, if any.
std::optional<std::size_t> fastest(const std::vector<Top5Entry> &benchmarked) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < benchmarked.size(); ++i) {
        if (!benchmarked[i].measured()) continue;
        if (!best || *benchmarked[i].measurement.median_ms < *benchmarked[*best].measurement.median_ms)
            best = i;
    }
    return best;
}
} // namespace

Top5Result run_top5(const Top5Options &options, const Top5Progress &progress) {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    const OneShotOptions &opt = options.batch;

    // --- Refuse a missing device and bad input before anything is written.
    std::unique_ptr<Executor> executor =
        make_executor(executor_options(options.executor, options.device, options.timing, opt.gpu));
    const BatchInputs inputs = check_batch_inputs(opt);
    if (!inputs.source.searches)
        throw UserError("tune searches with gpusched; name other sources with --baselines");
    if (options.top < 1) throw UserError("--top must be at least 1");
    const std::vector<ScheduleSource> baselines = baseline_sources(options.baselines);
    if (locate_benchmark_runner_archive().empty())
        throw UnavailableError(
            "the benchmark harness (libgpusched_benchmark_runner.a) was not found; build gpusched "
            "or set GPUSCHED_BENCHMARK_RUNNER");
    if (locate_cxx_compiler().empty())
        throw UnavailableError("no C++ compiler (c++ or $CXX) to link benchmarks with");

    Top5Result result;
    result.db_path = opt.db_path;
    result.target = inputs.target;
    result.benchmark_target = benchmark_target(options.device, inputs.target);
    result.device = executor->device_name();
    Top5Run run(options, progress, *executor, inputs, result);
    run.start();
    run.generate();
    const auto batch_done = Clock::now();
    result.batch_seconds = std::chrono::duration<double>(batch_done - t0).count();

    // --- Choose what to benchmark: the best predicted that do not spill.
    result.ranking = rank_by_prediction(selection_candidates(result.samples));
    std::vector<std::size_t> chosen = benchmark_candidates(result.samples, result.ranking, result.spillers);
    if (chosen.empty()) {
        const std::string error = first_error(result.samples);
        run.fail(error);
        throw UserError("no sample compiled: " + error);
    }
    result.spill_check = spill_check_line(result, chosen);
    if (chosen.size() > static_cast<std::size_t>(options.top))
        chosen.resize(static_cast<std::size_t>(options.top));
    if (const std::string error = batch_library_problem(options.device, result.samples[chosen.front()].dir +
                                                                            "/" + opt.generator_name + ".a");
        !error.empty()) {
        run.fail(error);
        throw UnavailableError(error);
    }

    // --- Build and benchmark the chosen samples, then the baselines.
    std::vector<Top5Entry> entries = run.entries(chosen, baselines);
    if (!run.measure(entries)) {
        // Interrupted: what was measured is stored; the rest was cancelled.
        run.interrupted();
        throw InterruptedError("interrupted while benchmarking; measured samples are stored in run " +
                               std::to_string(result.run_id));
    }
    result.benchmark_seconds = std::chrono::duration<double>(Clock::now() - batch_done).count();
    for (std::size_t i = 0; i < entries.size(); ++i)
        (i < chosen.size() ? result.benchmarked : result.baselines).push_back(std::move(entries[i]));

    // --- Keep the fastest sample whose output was right.
    result.best = fastest(result.benchmarked);
    if (!result.best) {
        const Top5Entry &first = result.benchmarked.front();
        const std::string error = "every benchmarked sample failed (" +
                                  std::to_string(result.benchmarked.size()) + " of " +
                                  std::to_string(result.benchmarked.size()) + "); " + first.label + ": " +
                                  to_string(first.measurement.outcome) + ": " + first.measurement.error;
        run.fail(error);
        throw UserError(error);
    }
    const Top5Entry &best = result.benchmarked[*result.best];
    // A baseline measured faster than the best sample is what the user gets.
    const std::optional<std::size_t> fastest_baseline = fastest(result.baselines);
    if (fastest_baseline &&
        *result.baselines[*fastest_baseline].measurement.median_ms < *best.measurement.median_ms) {
        result.kept_baseline = fastest_baseline;
        const Top5Entry &kept = result.baselines[*fastest_baseline];
        result.best_files = copy_sample_files(kept.baseline, opt.generator_name, opt.output_dir);
        run.finish(kept.sample_id, kept.source);
    } else {
        result.best_files =
            copy_sample_files(result.samples[*best.sample], opt.generator_name, opt.output_dir);
        run.finish(best.sample_id);
    }
    result.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return result;
}

} // namespace gpusched
