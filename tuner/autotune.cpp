#include "tuner/autotune.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "costmodel/crc32.h"
#include "costmodel/network_weights.h"
#include "costmodel/weights_file.h"
#include "db/rank_correlation.h"
#include "db/run_queries.h"
#include "tuner/baselines.h"
#include "tuner/retrain.h"
#include "tuner/runner/benchmark_build.h"
#include "tuner/top5.h"

namespace gpusched {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char *to_string(TrainOn t) {
    switch (t) {
    case TrainOn::Run:
        return "run";
    case TrainOn::Pipeline:
        return "pipeline";
    case TrainOn::Device:
        return "device";
    }
    return "?";
}

std::optional<TrainOn> parse_train_on(const std::string &name) {
    if (name == "run") return TrainOn::Run;
    if (name == "pipeline") return TrainOn::Pipeline;
    if (name == "device") return TrainOn::Device;
    return std::nullopt;
}

namespace {

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string crc_of_file(const std::string &path) {
    const std::string bytes = read_text_file(path);
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc32(bytes.data(), bytes.size()));
    return hex;
}

// The run's config: everything that decides which samples a batch holds and
// how the model is trained. A resumed run takes these from the database, so
// it continues exactly the run that was started.
nlohmann::json run_config(const AutotuneOptions &o, const std::string &device_name,
                          const std::string &benchmark_target) {
    const OneShotOptions &b = o.batch;
    nlohmann::json c = {{"batch", b.samples},
            {"iterations", o.iterations},
            {"seed", b.seed},
            {"beam_size", b.beam_size},
            {"passes", b.passes},
            {"dropout", b.greedy_dropout},
            {"gpu_profile", to_json(b.gpu)},
            {"generator_params", b.generator_params},
            {"search_config", b.search_config},
            {"device", to_string(o.device)},
            {"device_name", device_name},
            {"benchmark_target", benchmark_target},
            {"from_scratch", o.from_scratch},
            {"initial_weights", o.initial_weights},
            {"train_on", to_string(o.train_on)},
            {"epochs", o.epochs},
            {"learning_rate", o.learning_rate},
            {"timing", to_json(o.timing)}};
    if (!o.started_by.empty()) c["started_by"] = o.started_by;
    return c;
}

// Overrides the options that define the run with those stored for it.
void apply_stored_config(AutotuneOptions &o, const nlohmann::json &c) {
    OneShotOptions &b = o.batch;
    b.samples = c.at("batch").get<int>();
    o.iterations = c.at("iterations").get<int>();
    b.seed = c.at("seed").get<uint64_t>();
    b.beam_size = c.at("beam_size").get<int>();
    b.passes = c.at("passes").get<int>();
    b.greedy_dropout = c.at("dropout").get<double>();
    b.gpu = gpu_profile_from_json(c.at("gpu_profile"));
    b.generator_params = c.at("generator_params").get<std::map<std::string, std::string>>();
    b.search_config = c.at("search_config");
    o.device = *parse_device_kind(c.at("device").get<std::string>());
    o.from_scratch = c.at("from_scratch").get<bool>();
    o.initial_weights = c.at("initial_weights").get<std::string>();
    o.train_on = *parse_train_on(c.at("train_on").get<std::string>());
    o.epochs = c.at("epochs").get<int>();
    o.learning_rate = c.at("learning_rate").get<double>();
    o.timing = timing_from_json(c.at("timing"));
}

// Statistics of a batch from its stored samples: counts, best time, and how
// the predictions (of the weights the batch searched with) ranked the
// measured times.
void batch_statistics(const std::vector<db::SampleStore::StoredSampleState> &rows, db::AutotuneBatchRow &b) {
    b.samples = static_cast<int64_t>(rows.size());
    b.measured = b.failed = b.spilled = 0;
    b.best_ms = b.spearman = b.kendall = b.regret = std::nullopt;
    std::vector<double> predicted, measured;
    std::optional<double> pick_predicted, pick_ms;
    for (const auto &s : rows) {
        if (s.failed) ++b.failed;
        if (s.spilled) ++b.spilled;
        if (!s.measured) continue;
        ++b.measured;
        if (!b.best_ms || *s.runtime_ms < *b.best_ms) b.best_ms = *s.runtime_ms;
        if (!s.predicted_cost) continue;
        predicted.push_back(*s.predicted_cost);
        measured.push_back(*s.runtime_ms);
        if (!pick_predicted || *s.predicted_cost < *pick_predicted) {
            pick_predicted = *s.predicted_cost;
            pick_ms = *s.runtime_ms;
        }
    }
    b.spearman = db::spearman_rho(predicted, measured);
    b.kendall = db::kendall_tau_b(predicted, measured);
    if (pick_ms && b.best_ms && *b.best_ms > 0) b.regret = *pick_ms / *b.best_ms;
}

// The run's baselines (AutotuneOptions::baselines): those the run already
// measured are read back; the others are made, built and timed now, each as
// a run of its own whose config names the autotune run (baseline_of_run).
std::vector<AutotuneBaseline> run_baselines(const AutotuneOptions &o, const std::vector<ScheduleSource> &sources,
                                            int64_t run_id, int64_t pipeline_id, const std::string &device_name,
                                            const std::string &benchmark_target, const std::string &out_dir,
                                            const ReferenceOutputs &reference, Executor &executor,
                                            db::Database &database, db::SampleStore &store, std::mutex &db_mutex) {
    std::vector<AutotuneBaseline> out;
    std::vector<std::size_t> todo;
    for (const ScheduleSource &src : sources) {
        AutotuneBaseline b;
        b.source = src.name;
        std::lock_guard<std::mutex> lock(db_mutex);
        if (const auto settled = db::RunQueries(database).settled_baseline(run_id, src.name)) {
            b.run_id = settled->run_id;
            b.sample_id = settled->sample_id;
            if (settled->finished) b.median_ms = settled->median_ms;
            else b.problem = settled->error;
        } else {
            todo.push_back(out.size());
        }
        out.push_back(std::move(b));
    }
    if (todo.empty()) return out;

    const nlohmann::json config = {{"baseline_of_run", run_id},
                                   {"device", to_string(o.device)},
                                   {"device_name", device_name},
                                   {"benchmark_target", benchmark_target},
                                   {"timing", to_json(o.timing)}};
    auto key_of = [&](std::size_t i) { return "run " + std::to_string(run_id) + " baseline " + out[i].source; };
    auto record = [&](std::size_t i, const Measurement &m, const ExecutionRecord &execution) {
        AutotuneBaseline &b = out[i];
        b.measured_now = true;
        if (m.measured()) b.median_ms = m.median_ms;
        else b.problem = std::string(to_string(m.outcome)) + ": " + m.error;
        std::lock_guard<std::mutex> lock(db_mutex);
        store.record_measurement(b.sample_id, measurement_row(m, execution));
        store.finish_run(b.run_id, m.measured() ? "finished" : "failed",
                         m.measured() ? std::optional<int64_t>(b.sample_id) : std::nullopt, b.problem);
    };
    executor.begin("run-" + std::to_string(run_id),
                   [&](const BenchmarkTask &task, const Measurement &m, const ExecutionRecord &execution) {
                       for (std::size_t i : todo)
                           if (key_of(i) == task.key) record(i, m, execution);
                   });
    for (std::size_t i : todo) {
        AutotuneBaseline &b = out[i];
        const ScheduleSource &src = sources[i];
        BaselineBuild bb;
        try {
            bb = build_baseline(
                o.batch, src, o.device, benchmark_target, out_dir + "/baselines/" + src.name,
                [&](const OneShotSample &schedule) {
                    std::lock_guard<std::mutex> lock(db_mutex);
                    database.transaction([&] {
                        db::RunInfo run;
                        run.pipeline_id = pipeline_id;
                        run.mode = "autotune";
                        run.autoscheduler = src.name;
                        run.config = config.dump();
                        run.gpusched_version = o.batch.gpusched_version;
                        b.run_id = store.start_run(run);
                        b.sample_id =
                            store.add_sample(b.run_id, to_sample_row(schedule, nlohmann::json::object()));
                    });
                },
                [&] { return reference.dir; });
        } catch (const db::DbError &) {
            throw; // the database is the run's: its failure ends the run
        } catch (const std::exception &e) {
            bb.build.ok = false;
            bb.build.error = e.what();
            if (b.run_id == 0) { // failed before its rows were written: nothing to store
                b.problem = std::string("build failed: ") + e.what();
                continue;
            }
        }
        if (!reference.ok())
            record(i, not_benchmarked(src.name, device_name, o.device, MeasureOutcome::NotRun,
                                      "no CPU reference to check the output against: " + reference.failure), {});
        else if (!bb.build.ok)
            record(i, not_benchmarked(src.name, device_name, o.device, MeasureOutcome::BuildFailed, bb.build.error),
                   {});
        else
            executor.submit({key_of(i), bb.build.binary});
    }
    if (!executor.finish()) {
        // Interrupted: a baseline not timed stays for the resume to measure.
        std::lock_guard<std::mutex> lock(db_mutex);
        for (std::size_t i : todo)
            if (!out[i].measured_now && out[i].run_id != 0)
                store.finish_run(out[i].run_id, "interrupted", std::nullopt, "interrupted while benchmarking");
    }
    return out;
}

} // namespace

AutotuneResult run_autotune(const AutotuneOptions &options, const AutotuneProgressFn &progress) {
    const auto t0 = Clock::now();
    AutotuneOptions o = options;
    AutotuneResult result;
    result.db_path = o.batch.db_path;

    // --- A resumed run: its stored config decides the samples.
    std::optional<db::StoredRun> stored;
    if (o.resume_run) {
        if (!fs::exists(o.batch.db_path))
            throw CannotResumeError("cannot resume run " + std::to_string(*o.resume_run) + ": database '" +
                            o.batch.db_path + "' does not exist");
        db::Database database = db::Database::open(o.batch.db_path);
        db::SampleStore store(database);
        stored = store.find_run(*o.resume_run);
        const std::string which = "run " + std::to_string(*o.resume_run) + " in '" + o.batch.db_path + "'";
        if (!stored) throw CannotResumeError("cannot resume " + which + ": there is no such run");
        if (stored->mode != "autotune")
            throw CannotResumeError("cannot resume " + which + ": it is a " + stored->mode + " run, not autotune");
        if (stored->status == "finished" && !stored->stopped_by)
            throw CannotResumeError("cannot resume " + which + ": it finished all its iterations");
        nlohmann::json c = nlohmann::json::parse(stored->config, nullptr, false);
        try {
            apply_stored_config(o, c);
        } catch (const std::exception &e) {
            throw CannotResumeError("cannot resume " + which + ": its stored config is not an autotune config (" +
                            e.what() + ")");
        }
        if (o.batch.generator_path.empty()) o.batch.generator_path = stored->pipeline.generator_path;
        if (o.batch.generator_name.empty()) o.batch.generator_name = stored->pipeline.generator_name;
        if (o.batch.generator_name != stored->pipeline.generator_name)
            throw CannotResumeError("cannot resume " + which + " with generator '" + o.batch.generator_name +
                            "': the run tunes '" + stored->pipeline.generator_name + "'");
        if (!fs::exists(o.batch.generator_path))
            throw CannotResumeError("cannot resume " + which + ": its generator '" + o.batch.generator_path +
                            "' does not exist (name another with the positional argument)");
        if (hash_file(o.batch.generator_path) != stored->pipeline.generator_hash)
            throw CannotResumeError("cannot resume " + which + ": generator '" + o.batch.generator_path +
                            "' is not the build the run started with (its bytes differ); samples of "
                            "two builds are never mixed in one run");
        o.batch.target = stored->pipeline.target;
        result.resumed = true;
    }
    OneShotOptions &opt = o.batch;
    if (o.iterations < 1) throw UserError("--iterations must be at least 1");
    if (o.max_samples && *o.max_samples < 1) throw UserError("--max-samples must be at least 1");
    if (o.epochs < 1) throw UserError("--epochs must be at least 1");
    if (!o.initial_weights.empty() && o.from_scratch)
        throw UserError("--weights and --from-scratch both choose the first batch's weights; give one");
    if (!o.initial_weights.empty()) {
        o.initial_weights = fs::absolute(o.initial_weights).string();
        read_weights_file(o.initial_weights); // a bad file is refused before any work
    }
    const BatchInputs inputs = check_batch_inputs(opt);
    if (!inputs.source.searches)
        throw UserError("autotune retrains the gpusched search's model; schedule source '" + opt.schedule_source +
                        "' does not search");
    const std::vector<ScheduleSource> baselines = baseline_sources(o.baselines);
    ExecutorOptions eo = executor_options(o.executor, o.device, o.timing, opt.gpu);
    eo.stop = o.stop;
    std::unique_ptr<Executor> executor = make_executor(eo);
    if (locate_benchmark_runner_archive().empty())
        throw UnavailableError("the benchmark harness (libgpusched_benchmark_runner.a) was not found; build "
                               "gpusched or set GPUSCHED_BENCHMARK_RUNNER");
    result.target = inputs.target;
    result.benchmark_target = benchmark_target(o.device, inputs.target);
    result.device = executor->device_name();

    db::Database database = db::Database::open(opt.db_path);
    db::SampleStore store(database);
    std::mutex db_mutex;
    const int n = inputs.samples;

    // --- The run row: new, or the resumed one back to running.
    if (stored) {
        const nlohmann::json c = nlohmann::json::parse(stored->config);
        if (c.value("device_name", "") != result.device)
            throw CannotResumeError("cannot resume run " + std::to_string(stored->id) + " on " + result.device +
                            ": it measured on " + c.value("device_name", "") +
                            ", and times of two devices are never mixed");
        result.run_id = stored->id;
        store.set_run_status(result.run_id, "running", std::nullopt);
    } else {
        database.transaction([&] {
            db::RunInfo run;
            run.pipeline_id = store.upsert_pipeline(pipeline_identity(opt, inputs.target));
            run.mode = "autotune";
            run.autoscheduler = opt.schedule_source;
            run.config = run_config(o, result.device, result.benchmark_target).dump();
            run.gpusched_version = opt.gpusched_version;
            result.run_id = store.start_run(run);
        });
    }
    const std::optional<db::StoredRun> run_row = store.find_run(result.run_id);
    const int64_t pipeline_id = run_row->pipeline_id;
    const std::string out_dir = fs::absolute(opt.output_dir).string();
    const std::string weights_dir = out_dir + "/weights";
    fs::create_directories(weights_dir);

    // --- Stop conditions, checked before each sample starts.
    std::atomic<int64_t> run_samples{db::RunQueries(database).sample_count(result.run_id)}; // stored + started in this invocation
    std::mutex stop_mutex;
    std::string stop_reason;
    auto should_stop = [&]() -> bool {
        std::lock_guard<std::mutex> lock(stop_mutex);
        if (!stop_reason.empty()) return true;
        if (o.stop && o.stop->load()) stop_reason = "interrupted";
        else if (o.max_samples && run_samples.load() >= *o.max_samples) stop_reason = "max samples";
        else if (o.time_budget && seconds_since(t0) >= o.time_budget->count()) stop_reason = "time budget";
        return !stop_reason.empty();
    };

    // The CPU reference every benchmark's output is compared with: once per invocation.
    const ValidationRequest base = schedule_request(opt, inputs.source, out_dir + "/reference");
    const ReferenceOutputs reference = reference_outputs(base);
    if (!baselines.empty() && !should_stop())
        result.baselines = run_baselines(o, baselines, result.run_id, pipeline_id, result.device,
                                         result.benchmark_target, out_dir, reference, *executor, database, store,
                                         db_mutex);

    std::optional<double> first_batch_best;
    auto run_best = [&] { return db::RunQueries(database).fastest_measured_ms(result.run_id); };
    const int64_t samples_at_start = run_samples.load();
    const int64_t planned = static_cast<int64_t>(o.iterations) * n;

    // --- The batches.
    for (int b = 0; b < o.iterations; ++b) {
        std::vector<db::AutotuneBatchRow> rows = store.autotune_batches(result.run_id);
        auto row_of = [&](int batch) -> std::optional<db::AutotuneBatchRow> {
            for (const auto &r : rows)
                if (r.batch == batch) return r;
            return std::nullopt;
        };
        std::optional<db::AutotuneBatchRow> row = row_of(b);
        if (row && row->status == "finished") {
            if (b == 0) first_batch_best = row->best_ms;
            continue;
        }
        if (should_stop()) break;

        // The weights this batch searches with.
        if (!row) {
            std::optional<int64_t> weights_id;
            if (b > 0) {
                // Only reached when batch b-1 was finished: its transaction inserted this row.
                throw UserError("run " + std::to_string(result.run_id) + " has no weights recorded for batch " +
                                std::to_string(b) + " although batch " + std::to_string(b - 1) +
                                " finished; the database was changed by hand");
            }
            if (o.from_scratch || !o.initial_weights.empty()) {
                std::string path = o.initial_weights;
                std::string provenance = "the weights file the user named";
                if (o.from_scratch) {
                    path = weights_dir + "/run" + std::to_string(result.run_id) + "-batch0.weights";
                    provenance = "random initial weights (seed " + std::to_string(opt.seed) + ") of autotune run " +
                                 std::to_string(result.run_id) + ", --from-scratch";
                    write_weights_file(path, WeightsFile{NetworkWeights::initial(opt.seed), provenance});
                }
                const nlohmann::json trained_on = {{"by", "autotune run " + std::to_string(result.run_id)},
                                                   {"batch", 0},
                                                   {"samples", nlohmann::json::array()},
                                                   {"from_scratch", o.from_scratch}};
                weights_id = store.record_weights({path, crc_of_file(path), provenance, trained_on.dump()});
            }
            store.begin_batch(result.run_id, 0, weights_id);
            rows = store.autotune_batches(result.run_id);
            row = row_of(0);
        }
        const std::string weights_path = row->weights_path;
        if (!weights_path.empty() && !fs::exists(weights_path))
            throw CannotResumeError("the weights of batch " + std::to_string(b) + " of run " + std::to_string(result.run_id) +
                            " ('" + weights_path + "') are gone; restore the file to resume");

        OneShotOptions bopt = opt;
        bopt.seed = opt.seed + static_cast<uint64_t>(b) * static_cast<uint64_t>(n);
        if (!bopt.search_config.is_object()) bopt.search_config = nlohmann::json::object();
        if (!weights_path.empty()) bopt.search_config["weights_path"] = weights_path;
        const std::string batch_dir = out_dir + "/batches/" + std::to_string(b);

        // Which indices still need work: no row (generate and insert), or a
        // row never measured (generate again, measure onto the row).
        std::vector<int> todo;
        std::map<int, int64_t> existing_id;
        int compiled = 0, benchmarked = 0, failed = 0;
        {
            std::set<int> complete;
            for (const auto &s : store.batch_samples(result.run_id, b)) {
                if (s.complete) {
                    complete.insert(s.idx);
                    if (s.compiled) ++compiled;
                    if (s.measured) ++benchmarked;
                    if (s.failed) ++failed;
                } else {
                    existing_id[s.idx] = s.id;
                }
            }
            for (int i = 0; i < n; ++i)
                if (!complete.count(i)) todo.push_back(i);
        }

        // One sample's life: search, store, build; the benchmark comes from the queue.
        struct Work {
            OneShotSample sample;
            int64_t sample_id = 0;
            BenchmarkBuild build;
        };
        std::deque<Work> works; // stable addresses
        std::mutex mutex;
        std::condition_variable changed;
        int producers = std::max(1, std::min<int>(opt.jobs, static_cast<int>(todo.size())));
        std::size_t next = 0;
        std::mutex claim_mutex;
        std::exception_ptr db_failure;
        auto remember_failure = [&] {
            std::lock_guard<std::mutex> lock(db_mutex);
            if (!db_failure) db_failure = std::current_exception();
        };
        std::mutex report_mutex;
        auto report = [&](AutotuneStatus::Event event, const std::string &message) {
            if (!progress) return;
            AutotuneStatus st;
            st.event = event;
            st.batch = b;
            st.iterations = o.iterations;
            st.batch_size = n;
            {
                std::lock_guard<std::mutex> lock(mutex);
                st.compiled = compiled;
                st.benchmarked = benchmarked;
                st.failed = failed;
                st.best_ms = result.best_ms;
            }
            st.run_samples = run_samples.load();
            st.first_batch_best_ms = first_batch_best;
            const int64_t done_here = run_samples.load() - samples_at_start;
            if (done_here > 0) {
                const double per = seconds_since(t0) / static_cast<double>(done_here);
                st.eta_s = per * static_cast<double>(std::max<int64_t>(0, planned - run_samples.load()));
            }
            st.message = message;
            std::lock_guard<std::mutex> lock(report_mutex);
            progress(st);
        };
        // The next index to work on, or none when done or told to stop. A
        // new sample counts against --max-samples from here on.
        auto claim = [&]() -> std::optional<int> {
            std::lock_guard<std::mutex> lock(claim_mutex);
            if (should_stop()) return std::nullopt;
            const std::size_t k = next++;
            if (k >= todo.size()) return std::nullopt;
            if (!existing_id.count(todo[k])) ++run_samples;
            return todo[k];
        };
        result.best_ms = run_best();

        // A measurement comes back (from the executor, or a build that
        // failed): stored on its row, counted, reported.
        auto measured = [&](Work *w, Measurement m, const ExecutionRecord &execution) {
            const std::string label = "batch " + std::to_string(b) + " sample " + std::to_string(w->sample.index);
            m.label = label;
            try {
                std::lock_guard<std::mutex> lock(db_mutex);
                store.record_measurement(w->sample_id, measurement_row(m, execution));
            } catch (...) {
                remember_failure();
                return;
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (m.measured()) {
                    ++benchmarked;
                    if (!result.best_ms || *m.median_ms < *result.best_ms) result.best_ms = *m.median_ms;
                } else {
                    ++failed;
                }
            }
            report(AutotuneStatus::Event::Measured,
                   label + ": " +
                       (m.measured() ? "median " + std::to_string(*m.median_ms) + " ms"
                                     : std::string(to_string(m.outcome)) + ": " + m.error));
        };
        auto task_key = [&](int index) {
            return "run " + std::to_string(result.run_id) + " batch " + std::to_string(b) + " sample " +
                   std::to_string(index);
        };
        std::map<std::string, Work *> work_of_key;
        executor->begin("run-" + std::to_string(result.run_id),
                        [&](const BenchmarkTask &task, const Measurement &m, const ExecutionRecord &execution) {
                            Work *w = nullptr;
                            {
                                std::lock_guard<std::mutex> lock(mutex);
                                w = work_of_key.at(task.key);
                            }
                            measured(w, m, execution);
                        });

        auto producer = [&] {
            for (;;) {
                const std::optional<int> index = claim();
                if (!index) break;
                Work *w = nullptr;
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    works.emplace_back();
                    w = &works.back();
                }
                OneShotSample &s = w->sample;
                s.index = *index;
                s.dir = batch_dir + "/" + std::to_string(s.index);
                const std::string key = task_key(s.index);
                if (existing_id.count(s.index) && executor->adoptable(key)) {
                    // An earlier driver's job benchmarks this stored sample:
                    // follow it rather than search, build and submit again.
                    w->sample_id = existing_id.at(s.index);
                    {
                        std::lock_guard<std::mutex> lock(mutex);
                        work_of_key[key] = w;
                    }
                    BenchmarkTask task{key, {}};
                    task.binary.label = "batch " + std::to_string(b) + " sample " + std::to_string(s.index);
                    executor->submit(std::move(task));
                    continue;
                }
                generate_sample(bopt, inputs, s);
                db::SampleRow sample_row = to_sample_row(s, sample_search_config(bopt, s));
                sample_row.batch = b;
                const bool usable = sample_row.status == "ok";
                try {
                    std::lock_guard<std::mutex> lock(db_mutex);
                    auto it = existing_id.find(s.index);
                    if (it != existing_id.end()) {
                        w->sample_id = it->second;
                        if (!usable) {
                            // The search failed this time: the row says so.
                            db::MeasurementRow m;
                            m.benchmark = to_string(MeasureOutcome::BuildFailed);
                            m.status = "failed";
                            m.error = sample_row.error;
                            m.device = result.device;
                            store.record_measurement(w->sample_id, m);
                        }
                    } else {
                        w->sample_id = store.add_sample(result.run_id, sample_row);
                    }
                } catch (...) {
                    remember_failure();
                    break;
                }
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    if (usable) ++compiled;
                    else ++failed;
                }
                report(AutotuneStatus::Event::Sample,
                       "batch " + std::to_string(b) + " sample " + std::to_string(s.index) + ": " +
                           (usable ? (s.predicted_cost ? "predicted " + std::to_string(*s.predicted_cost) : "compiled")
                                   : sample_row.error));
                if (!usable) continue;
                if (reference.ok()) {
                    w->build = build_benchmark(sample_build_request(bopt, inputs, s, o.device,
                                                                    result.benchmark_target,
                                                                    batch_dir + "/bench-" + std::to_string(s.index)));
                } else {
                    w->build.error = "no CPU reference to check the output against: " + reference.failure;
                }
                w->build.binary.reference_dir = reference.dir;
                if (w->build.ok) {
                    {
                        std::lock_guard<std::mutex> lock(mutex);
                        work_of_key[key] = w;
                    }
                    executor->submit({key, w->build.binary});
                } else {
                    measured(w, not_benchmarked("batch " + std::to_string(b) + " sample " + std::to_string(s.index),
                                                result.device, o.device,
                                                reference.ok() ? MeasureOutcome::BuildFailed : MeasureOutcome::NotRun,
                                                w->build.error),
                             ExecutionRecord{});
                }
            }
            std::lock_guard<std::mutex> lock(mutex);
            --producers;
            changed.notify_all();
        };
        if (!todo.empty()) {
            std::vector<std::thread> threads;
            const int n_producers = producers;
            for (int j = 0; j < n_producers; ++j)
                threads.emplace_back(producer);
            for (auto &t : threads)
                t.join();
        }
        // Interrupted: the executor skipped (local) or cancelled (slurm)
        // what had not run; those rows stay unmeasured for --resume.
        executor->finish();
        if (db_failure) std::rethrow_exception(db_failure);
        result.samples_this_invocation = run_samples.load() - samples_at_start;

        // --- The batch's statistics, then retraining for the next batch.
        const auto batch_rows = store.batch_samples(result.run_id, b);
        db::AutotuneBatchRow stats = *row;
        batch_statistics(batch_rows, stats);
        const bool complete = static_cast<int>(batch_rows.size()) == n &&
                              std::all_of(batch_rows.begin(), batch_rows.end(),
                                          [](const auto &s) { return s.complete; });
        if (b == 0) first_batch_best = stats.best_ms;
        if (!complete) {
            stats.status = "running";
            store.update_batch(stats);
            break; // stopped inside the batch
        }
        stats.status = "measured";
        store.update_batch(stats);
        report(AutotuneStatus::Event::BatchDone, "batch " + std::to_string(b) + " done");
        if (b + 1 == o.iterations) {
            stats.status = "finished";
            store.update_batch(stats);
            break;
        }
        // Retrain from the weights this batch used, on the run's measured samples.
        const auto r0 = Clock::now();
        RetrainOptions ro;
        ro.db_path = opt.db_path;
        ro.initial_weights = weights_path;
        ro.output_path = weights_dir + "/run" + std::to_string(result.run_id) + "-batch" + std::to_string(b + 1) +
                         ".weights";
        ro.gpu = opt.gpu;
        ro.device = result.device;
        if (o.train_on == TrainOn::Run) ro.run_id = result.run_id;
        if (o.train_on == TrainOn::Pipeline) ro.pipeline_id = pipeline_id;
        ro.purpose = "autotune run " + std::to_string(result.run_id) + " after batch " + std::to_string(b) +
                     " (--train-on " + to_string(o.train_on) + ")";
        ro.epochs = o.epochs;
        ro.learning_rate = o.learning_rate;
        ro.seed = opt.seed + static_cast<uint64_t>(b) + 1;
        std::optional<int64_t> next_weights = row->weights_id;
        std::string retrain_note;
        try {
            std::lock_guard<std::mutex> lock(db_mutex);
            next_weights = retrain_from_database(ro, database).weights_id;
            retrain_note = "retrained on the measured samples: batch " + std::to_string(b + 1) + " searches with " +
                           ro.output_path;
        } catch (const UserError &e) {
            retrain_note = std::string("not retrained (") + e.what() + "): batch " + std::to_string(b + 1) +
                           " searches with the same weights";
        }
        stats.retrain_s = seconds_since(r0);
        result.retrain_seconds += *stats.retrain_s;
        stats.status = "finished";
        database.transaction([&] {
            store.begin_batch(result.run_id, b + 1, next_weights);
            store.update_batch(stats);
        });
        report(AutotuneStatus::Event::Retrained, retrain_note);
    }

    // --- How it ended, the run's best, its files.
    {
        db::RunQueries runs(database);
        const db::RunTally tally = runs.tally(result.run_id);
        result.samples = tally.samples;
        result.measured = tally.measured;
        result.failed = tally.failed;
        result.spilled = tally.spilled;
        if (const auto best = runs.fastest_measured_sample(result.run_id)) {
            result.best_sample_id = best->id;
            result.best_batch = best->batch;
            result.best_idx = best->idx;
            result.best_ms = best->median_ms;
        }
    }
    result.batches = store.autotune_batches(result.run_id);
    const bool all_done = static_cast<int>(result.batches.size()) == o.iterations &&
                          std::all_of(result.batches.begin(), result.batches.end(),
                                      [](const auto &r) { return r.status == "finished"; });
    {
        std::lock_guard<std::mutex> lock(stop_mutex);
        result.stopped_by = all_done ? "" : stop_reason.empty() ? "interrupted" : stop_reason;
    }
    result.end = all_done ? AutotuneEnd::Finished
                 : result.stopped_by == "interrupted" ? AutotuneEnd::Interrupted
                                                      : AutotuneEnd::StoppedByBudget;

    if (result.best_sample_id) {
        // The best sample's files, from its directory; a sample of an
        // earlier invocation whose files are gone is searched again (the
        // same seed and weights give the same schedule).
        OneShotSample best;
        best.index = result.best_idx;
        best.dir = out_dir + "/batches/" + std::to_string(result.best_batch) + "/" + std::to_string(best.index);
        if (!fs::exists(best.dir + "/" + opt.generator_name + ".schedule.h")) {
            OneShotOptions bopt = opt;
            bopt.seed = opt.seed + static_cast<uint64_t>(result.best_batch) * static_cast<uint64_t>(n);
            if (!bopt.search_config.is_object()) bopt.search_config = nlohmann::json::object();
            for (const auto &r : result.batches)
                if (r.batch == result.best_batch && !r.weights_path.empty())
                    bopt.search_config["weights_path"] = r.weights_path;
            generate_sample(bopt, inputs, best);
        }
        result.best_files = copy_sample_files(best, opt.generator_name, out_dir);
    }
    if (result.end == AutotuneEnd::Finished && !result.best_sample_id) {
        const std::string error = "no sample of the run was measured (" + std::to_string(result.samples) +
                                  " samples, " + std::to_string(result.failed) + " failed)";
        store.finish_run(result.run_id, "failed", std::nullopt, error);
        throw UserError(error);
    }
    store.finish_run(result.run_id, result.end == AutotuneEnd::Interrupted ? "interrupted" : "finished",
                     result.best_sample_id);
    if (!result.stopped_by.empty())
        store.set_run_status(result.run_id, result.end == AutotuneEnd::Interrupted ? "interrupted" : "finished",
                             result.stopped_by);
    result.wall_seconds = seconds_since(t0);
    return result;
}

} // namespace gpusched
