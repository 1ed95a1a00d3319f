#include "tuner/modes/autotune.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "common/elapsed.h"
#include "costmodel/crc32.h"
#include "costmodel/network_weights.h"
#include "costmodel/weights_file.h"
#include "db/rank_correlation.h"
#include "db/run_queries.h"
#include "tuner/measure/measurement_records.h"
#include "tuner/measure/measuring_round.h"
#include "tuner/measure/runner/benchmark_build.h"
#include "tuner/modes/baselines.h"
#include "tuner/modes/retrain.h"

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
                        {"retrain", o.retrain_if_better ? "if-better" : "always"},
                        {"timing", to_json(o.timing)}};
    write_search_settings(b.search, c);
    if (!o.started_by.empty()) c["started_by"] = o.started_by;
    return c;
}

// Overrides the options that define the run with those stored for it.
void apply_stored_config(AutotuneOptions &o, const nlohmann::json &c) {
    OneShotOptions &b = o.batch;
    b.samples = c.at("batch").get<int>();
    o.iterations = c.at("iterations").get<int>();
    b.search = read_search_settings(c);
    b.gpu = gpu_profile_from_json(c.at("gpu_profile"));
    b.generator_params = c.at("generator_params").get<std::map<std::string, std::string>>();
    b.search_config = c.at("search_config");
    o.device = *parse_device_kind(c.at("device").get<std::string>());
    o.from_scratch = c.at("from_scratch").get<bool>();
    o.initial_weights = c.at("initial_weights").get<std::string>();
    o.train_on = *parse_train_on(c.at("train_on").get<std::string>());
    o.epochs = c.at("epochs").get<int>();
    o.learning_rate = c.at("learning_rate").get<double>();
    // Runs stored before the check existed adopted every retraining.
    o.retrain_if_better = c.value("retrain", "always") == "if-better";
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

// A resumed run: its stored config overrides the options that define the
// run, after the checks that it can be resumed at all (CannotResumeError).
db::StoredRun load_resumed_run(AutotuneOptions &o) {
    const int64_t id = *o.resume_run;
    if (!fs::exists(o.batch.db_path))
        throw CannotResumeError("cannot resume run " + std::to_string(id) + ": database '" + o.batch.db_path +
                                "' does not exist");
    db::Database database = db::Database::open(o.batch.db_path);
    db::SampleStore store(database);
    const std::optional<db::StoredRun> stored = store.find_run(id);
    const std::string which = "run " + std::to_string(id) + " in '" + o.batch.db_path + "'";
    if (!stored) throw CannotResumeError("cannot resume " + which + ": there is no such run");
    if (stored->mode != "autotune")
        throw CannotResumeError("cannot resume " + which + ": it is a " + stored->mode +
                                " run, not autotune");
    if (stored->status == "finished" && !stored->stopped_by)
        throw CannotResumeError("cannot resume " + which + ": it finished all its iterations");
    try {
        apply_stored_config(o, nlohmann::json::parse(stored->config, nullptr, false));
    } catch (const std::exception &e) {
        throw CannotResumeError("cannot resume " + which + ": its stored config is not an autotune config (" +
                                e.what() + ")");
    }
    OneShotOptions &b = o.batch;
    if (b.generator_path.empty()) b.generator_path = stored->pipeline.generator_path;
    if (b.generator_name.empty()) b.generator_name = stored->pipeline.generator_name;
    if (b.generator_name != stored->pipeline.generator_name)
        throw CannotResumeError("cannot resume " + which + " with generator '" + b.generator_name +
                                "': the run tunes '" + stored->pipeline.generator_name + "'");
    if (!fs::exists(b.generator_path))
        throw CannotResumeError("cannot resume " + which + ": its generator '" + b.generator_path +
                                "' does not exist (name another with the positional argument)");
    if (hash_file(b.generator_path) != stored->pipeline.generator_hash)
        throw CannotResumeError("cannot resume " + which + ": generator '" + b.generator_path +
                                "' is not the build the run started with (its bytes differ); samples of "
                                "two builds are never mixed in one run");
    b.target = stored->pipeline.target;
    return *stored;
}

// Refuses options no run can use, before any work.
void check_options(AutotuneOptions &o) {
    if (o.iterations < 1) throw UserError("--iterations must be at least 1");
    if (o.max_samples && *o.max_samples < 1) throw UserError("--max-samples must be at least 1");
    if (o.epochs < 1) throw UserError("--epochs must be at least 1");
    if (!o.initial_weights.empty() && o.from_scratch)
        throw UserError("--weights and --from-scratch both choose the first batch's weights; give one");
    if (!o.initial_weights.empty()) {
        o.initial_weights = fs::absolute(o.initial_weights).string();
        read_weights_file(o.initial_weights); // a bad file is refused before any work
    }
}

// "batch 2 sample 5": a sample in messages and measurements.
std::string sample_label(int batch, int index) {
    return "batch " + std::to_string(batch) + " sample " + std::to_string(index);
}

// A sample of the batch being measured.
struct BatchWork {
    OneShotSample sample;
    int64_t sample_id = 0;
};

// Counts of the batch being measured, prior attempts included.
struct BatchCounts {
    int compiled = 0, benchmarked = 0, failed = 0;
};

// One invocation of an Autotune run: its rows, its baselines, its batches
// (each one measuring round, then statistics and retraining), its end.
class AutotuneRun {
public:
    AutotuneRun(const AutotuneOptions &o, const AutotuneProgressFn &progress, const BatchInputs &inputs,
                Executor &executor, AutotuneResult &result, Clock::time_point t0)
        : o_(o), opt_(o.batch), progress_(progress), inputs_(inputs), executor_(executor), result_(result),
          t0_(t0), n_(inputs.samples), database_(db::Database::open(opt_.db_path)), store_(database_) {}

    // The run row, new or the resumed one back to running; the CPU reference.
    void open(const std::optional<db::StoredRun> &stored) {
        if (stored) {
            const nlohmann::json c = nlohmann::json::parse(stored->config);
            if (c.value("device_name", "") != result_.device)
                throw CannotResumeError("cannot resume run " + std::to_string(stored->id) + " on " +
                                        result_.device + ": it measured on " + c.value("device_name", "") +
                                        ", and times of two devices are never mixed");
            result_.run_id = stored->id;
            store_.set_run_status(result_.run_id, "running", std::nullopt);
        } else {
            database_.transaction([&] {
                db::RunInfo run;
                run.pipeline_id = store_.upsert_pipeline(pipeline_identity(opt_, inputs_.target));
                run.mode = "autotune";
                run.autoscheduler = opt_.schedule_source;
                run.config = run_config(o_, result_.device, result_.benchmark_target).dump();
                run.gpusched_version = opt_.gpusched_version;
                result_.run_id = store_.start_run(run);
            });
        }
        pipeline_id_ = store_.find_run(result_.run_id)->pipeline_id;
        out_dir_ = fs::absolute(opt_.output_dir).string();
        weights_dir_ = out_dir_ + "/weights";
        fs::create_directories(weights_dir_);
        run_samples_ = db::RunQueries(database_).sample_count(result_.run_id);
        samples_at_start_ = run_samples_.load();
        // The CPU reference every benchmark's output is compared with: once per invocation.
        reference_ = reference_outputs(schedule_request(opt_, inputs_.source, out_dir_ + "/reference"));
    }

    // Stop conditions, checked before each sample starts.
    bool should_stop() {
        std::lock_guard<std::mutex> lock(stop_mutex_);
        if (!stop_reason_.empty()) return true;
        if (o_.stop && o_.stop->load())
            stop_reason_ = "interrupted";
        else if (o_.max_samples && run_samples_.load() >= *o_.max_samples)
            stop_reason_ = "max samples";
        else if (o_.time_budget && seconds_since(t0_) >= o_.time_budget->count())
            stop_reason_ = "time budget";
        return !stop_reason_.empty();
    }

    std::vector<AutotuneBaseline> measure_baselines(const std::vector<ScheduleSource> &sources);

    // Batch b: skipped when finished, else measured, then its statistics
    // and the next batch's weights. False when the run ends here.
    bool run_batch(int b) {
        std::optional<db::AutotuneBatchRow> row = batch_row(b);
        if (row && row->status == "finished") {
            if (b == 0) first_batch_best_ = row->best_ms;
            return true;
        }
        if (should_stop()) return false;
        if (!row) row = start_first_batch(b);
        if (!row->weights_path.empty() && !fs::exists(row->weights_path))
            throw CannotResumeError("the weights of batch " + std::to_string(b) + " of run " +
                                    std::to_string(result_.run_id) + " ('" + row->weights_path +
                                    "') are gone; restore the file to resume");
        measure_batch(b, *row);
        return close_batch(b, *row);
    }

    void finish();

private:
    std::optional<db::AutotuneBatchRow> batch_row(int b) {
        for (const auto &r : store_.autotune_batches(result_.run_id))
            if (r.batch == b) return r;
        return std::nullopt;
    }

    // Batch 0's row with the weights it searches with (a later batch's row
    // is written by the retraining before it).
    db::AutotuneBatchRow start_first_batch(int b) {
        if (b > 0) {
            // Only reached when batch b-1 was finished: its transaction inserted this row.
            throw UserError("run " + std::to_string(result_.run_id) + " has no weights recorded for batch " +
                            std::to_string(b) + " although batch " + std::to_string(b - 1) +
                            " finished; the database was changed by hand");
        }
        std::optional<int64_t> weights_id;
        if (o_.from_scratch || !o_.initial_weights.empty()) {
            std::string path = o_.initial_weights;
            std::string provenance = "the weights file the user named";
            if (o_.from_scratch) {
                path = weights_dir_ + "/run" + std::to_string(result_.run_id) + "-batch0.weights";
                provenance = "random initial weights (seed " + std::to_string(opt_.search.seed) +
                             ") of autotune run " + std::to_string(result_.run_id) + ", --from-scratch";
                write_weights_file(path, WeightsFile{NetworkWeights::initial(opt_.search.seed), provenance});
            }
            const nlohmann::json trained_on = {{"by", "autotune run " + std::to_string(result_.run_id)},
                                               {"batch", 0},
                                               {"samples", nlohmann::json::array()},
                                               {"from_scratch", o_.from_scratch}};
            weights_id = store_.record_weights({path, crc_of_file(path), provenance, trained_on.dump()});
        }
        store_.begin_batch(result_.run_id, 0, weights_id);
        return *batch_row(0);
    }

    // The batch's options: its seeds and the weights it searches with.
    OneShotOptions batch_options(int b, const std::string &weights_path) const {
        OneShotOptions bopt = opt_;
        bopt.search.seed = opt_.search.seed + static_cast<uint64_t>(b) * static_cast<uint64_t>(n_);
        if (!bopt.search_config.is_object()) bopt.search_config = nlohmann::json::object();
        if (!weights_path.empty()) bopt.search_config["weights_path"] = weights_path;
        return bopt;
    }

    void report(AutotuneStatus::Event event, int b, const std::string &message);
    void measure_batch(int b, const db::AutotuneBatchRow &row);
    PreparedWork prepare_sample(int b, const OneShotOptions &bopt, BatchWork &w,
                                const std::map<int, int64_t> &existing);
    void sample_measured(int b, BatchWork &w, Measurement m, const ExecutionRecord &execution);
    bool close_batch(int b, db::AutotuneBatchRow stats);
    std::string retrain_after(int b, const db::AutotuneBatchRow &row, db::AutotuneBatchRow &stats,
                              std::optional<int64_t> &next_weights);

    std::string task_key(int b, int index) const {
        return "run " + std::to_string(result_.run_id) + " " + sample_label(b, index);
    }

    const AutotuneOptions &o_;
    const OneShotOptions &opt_;
    const AutotuneProgressFn &progress_;
    const BatchInputs &inputs_;
    Executor &executor_;
    AutotuneResult &result_;
    const Clock::time_point t0_;
    const int n_;
    db::Database database_;
    db::SampleStore store_;
    std::mutex db_mutex_;
    int64_t pipeline_id_ = 0;
    std::string out_dir_, weights_dir_;
    ReferenceOutputs reference_;
    std::atomic<int64_t> run_samples_{0}; // stored + started in this invocation
    int64_t samples_at_start_ = 0;
    std::mutex stop_mutex_;
    std::string stop_reason_;
    std::optional<double> first_batch_best_;
    std::mutex counts_mutex_, report_mutex_;
    BatchCounts counts_;
};

void AutotuneRun::report(AutotuneStatus::Event event, int b, const std::string &message) {
    if (!progress_) return;
    AutotuneStatus st;
    st.event = event;
    st.batch = b;
    st.iterations = o_.iterations;
    st.batch_size = n_;
    {
        std::lock_guard<std::mutex> lock(counts_mutex_);
        st.compiled = counts_.compiled;
        st.benchmarked = counts_.benchmarked;
        st.failed = counts_.failed;
        st.best_ms = result_.best_ms;
    }
    st.run_samples = run_samples_.load();
    st.first_batch_best_ms = first_batch_best_;
    const int64_t done_here = run_samples_.load() - samples_at_start_;
    if (done_here > 0) {
        const int64_t planned = static_cast<int64_t>(o_.iterations) * n_;
        const double per = seconds_since(t0_) / static_cast<double>(done_here);
        st.eta_s = per * static_cast<double>(std::max<int64_t>(0, planned - run_samples_.load()));
    }
    st.message = message;
    std::lock_guard<std::mutex> lock(report_mutex_);
    progress_(st);
}

// One measuring round over the batch's indices that still need work: no
// row (search and insert), or a row never measured (search again, measure
// onto the row).
void AutotuneRun::measure_batch(int b, const db::AutotuneBatchRow &row) {
    const OneShotOptions bopt = batch_options(b, row.weights_path);
    std::vector<int> todo;
    std::map<int, int64_t> existing; // stored, never measured
    counts_ = {};
    {
        std::set<int> complete;
        for (const auto &s : store_.batch_samples(result_.run_id, b)) {
            if (!s.complete) {
                existing[s.idx] = s.id;
                continue;
            }
            complete.insert(s.idx);
            if (s.compiled) ++counts_.compiled;
            if (s.measured) ++counts_.benchmarked;
            if (s.failed) ++counts_.failed;
        }
        for (int i = 0; i < n_; ++i)
            if (!complete.count(i)) todo.push_back(i);
    }
    result_.best_ms = db::RunQueries(database_).fastest_measured_ms(result_.run_id);

    std::vector<BatchWork> works(todo.size());
    RoundPlan plan;
    plan.scope = "run-" + std::to_string(result_.run_id);
    plan.items = todo.size();
    plan.jobs = opt_.jobs;
    // A new sample counts against --max-samples from its claim on.
    plan.may_claim = [&](std::size_t k) {
        if (should_stop()) return false;
        if (!existing.count(todo[k])) ++run_samples_;
        return true;
    };
    plan.prepare = [&](std::size_t k) {
        works[k].sample.index = todo[k];
        return prepare_sample(b, bopt, works[k], existing);
    };
    plan.measured = [&](std::size_t k, const Measurement &m, const ExecutionRecord &execution) {
        sample_measured(b, works[k], m, execution);
    };
    // Interrupted: the executor skipped (local) or cancelled (slurm) what
    // had not run; those rows stay unmeasured for --resume.
    run_measuring_round(executor_, plan);
    result_.samples_this_invocation = run_samples_.load() - samples_at_start_;
}

// One sample's life up to its benchmark: search, store, build.
PreparedWork AutotuneRun::prepare_sample(int b, const OneShotOptions &bopt, BatchWork &w,
                                         const std::map<int, int64_t> &existing) {
    OneShotSample &s = w.sample;
    const std::string batch_dir = out_dir_ + "/batches/" + std::to_string(b);
    const std::string label = sample_label(b, s.index);
    s.dir = batch_dir + "/" + std::to_string(s.index);
    const std::string key = task_key(b, s.index);
    const auto stored = existing.find(s.index);
    if (stored != existing.end() && executor_.adoptable(key)) {
        // An earlier driver's job benchmarks this stored sample: follow it
        // rather than search, build and submit again.
        w.sample_id = stored->second;
        return PreparedWork::adopt(key, label);
    }
    generate_sample(bopt, inputs_, s);
    db::SampleRow sample_row = to_sample_row(s, sample_search_config(bopt, s));
    sample_row.batch = b;
    const bool usable = sample_row.status == "ok";
    {
        std::lock_guard<std::mutex> lock(db_mutex_);
        if (stored == existing.end()) {
            w.sample_id = store_.add_sample(result_.run_id, sample_row);
        } else {
            w.sample_id = stored->second;
            if (!usable) {
                // The search failed this time: the row says so.
                db::MeasurementRow m;
                m.benchmark = to_string(MeasureOutcome::BuildFailed);
                m.status = "failed";
                m.error = sample_row.error;
                m.device = result_.device;
                store_.record_measurement(w.sample_id, m);
            }
        }
    }
    {
        std::lock_guard<std::mutex> lock(counts_mutex_);
        ++(usable ? counts_.compiled : counts_.failed);
    }
    report(AutotuneStatus::Event::Sample, b,
           label + ": " +
               (usable ? (s.predicted_cost ? "predicted " + std::to_string(*s.predicted_cost) : "compiled")
                       : sample_row.error));
    if (!usable) return PreparedWork::nothing();
    BenchmarkBuild build;
    if (reference_.ok())
        build = build_benchmark(sample_build_request(bopt, inputs_, s, o_.device, result_.benchmark_target,
                                                     batch_dir + "/bench-" + std::to_string(s.index)));
    return after_build(key, label, build, reference_, result_.device, o_.device);
}

// A measurement comes back (from the executor, or a build that failed):
// stored on its row, counted, reported.
void AutotuneRun::sample_measured(int b, BatchWork &w, Measurement m, const ExecutionRecord &execution) {
    const std::string label = sample_label(b, w.sample.index);
    m.label = label;
    {
        std::lock_guard<std::mutex> lock(db_mutex_);
        store_.record_measurement(w.sample_id, measurement_row(m, execution));
    }
    {
        std::lock_guard<std::mutex> lock(counts_mutex_);
        if (m.measured()) {
            ++counts_.benchmarked;
            if (!result_.best_ms || *m.median_ms < *result_.best_ms) result_.best_ms = *m.median_ms;
        } else {
            ++counts_.failed;
        }
    }
    report(AutotuneStatus::Event::Measured, b,
           label + ": " +
               (m.measured() ? "median " + std::to_string(*m.median_ms) + " ms"
                             : std::string(to_string(m.outcome)) + ": " + m.error));
}

// The batch's statistics, then retraining for the next batch. False when
// the run ends with this batch (stopped inside it, or the last one).
bool AutotuneRun::close_batch(int b, db::AutotuneBatchRow stats) {
    const db::AutotuneBatchRow row = stats;
    const auto batch_rows = store_.batch_samples(result_.run_id, b);
    batch_statistics(batch_rows, stats);
    const bool complete =
        static_cast<int>(batch_rows.size()) == n_ &&
        std::all_of(batch_rows.begin(), batch_rows.end(), [](const auto &s) { return s.complete; });
    if (b == 0) first_batch_best_ = stats.best_ms;
    if (!complete) {
        stats.status = "running";
        store_.update_batch(stats);
        return false; // stopped inside the batch
    }
    stats.status = "measured";
    store_.update_batch(stats);
    report(AutotuneStatus::Event::BatchDone, b, "batch " + std::to_string(b) + " done");
    if (b + 1 == o_.iterations) {
        stats.status = "finished";
        store_.update_batch(stats);
        return false;
    }
    std::optional<int64_t> next_weights = row.weights_id;
    const std::string note = retrain_after(b, row, stats, next_weights);
    stats.status = "finished";
    database_.transaction([&] {
        store_.begin_batch(result_.run_id, b + 1, next_weights);
        store_.update_batch(stats);
    });
    report(AutotuneStatus::Event::Retrained, b, note);
    return true;
}

// Retrains from the weights batch b used, on the run's (or the pipeline's,
// or the device's) measured samples: the next batch's weights, and a line
// saying which they are.
std::string AutotuneRun::retrain_after(int b, const db::AutotuneBatchRow &row, db::AutotuneBatchRow &stats,
                                       std::optional<int64_t> &next_weights) {
    const auto r0 = Clock::now();
    RetrainOptions ro;
    ro.db_path = opt_.db_path;
    ro.initial_weights = row.weights_path;
    ro.output_path = weights_dir_ + "/run" + std::to_string(result_.run_id) + "-batch" +
                     std::to_string(b + 1) + ".weights";
    ro.gpu = opt_.gpu;
    ro.device = result_.device;
    if (o_.train_on == TrainOn::Run) ro.run_id = result_.run_id;
    if (o_.train_on == TrainOn::Pipeline) ro.pipeline_id = pipeline_id_;
    ro.purpose = "autotune run " + std::to_string(result_.run_id) + " after batch " + std::to_string(b) +
                 " (--train-on " + to_string(o_.train_on) + ")";
    ro.epochs = o_.epochs;
    ro.learning_rate = o_.learning_rate;
    ro.seed = opt_.search.seed + static_cast<uint64_t>(b) + 1;
    std::string note;
    ro.keep_start_unless_better = o_.retrain_if_better;
    try {
        std::lock_guard<std::mutex> lock(db_mutex_);
        const RetrainResult retrained = retrain_from_database(ro, database_);
        const std::string checked = retrained.check ? " (" + describe(*retrained.check) + ")" : "";
        if (retrained.kept_start) {
            note = "kept batch " + std::to_string(b) + "'s weights for batch " + std::to_string(b + 1) +
                   ": retrained copies ranked held-out samples worse" + checked;
        } else {
            next_weights = retrained.weights_id;
            note = "retrained on the measured samples: batch " + std::to_string(b + 1) + " searches with " +
                   ro.output_path + checked;
        }
    } catch (const UserError &e) {
        note = std::string("not retrained (") + e.what() + "): batch " + std::to_string(b + 1) +
               " searches with the same weights";
    }
    stats.retrain_s = seconds_since(r0);
    result_.retrain_seconds += *stats.retrain_s;
    return note;
}

// The run's baselines (AutotuneOptions::baselines): those the run already
// measured are read back; the others are made, built and timed now in one
// measuring round, each as a run of its own whose config names the
// autotune run (baseline_of_run).
std::vector<AutotuneBaseline> AutotuneRun::measure_baselines(const std::vector<ScheduleSource> &sources) {
    std::vector<AutotuneBaseline> out;
    std::vector<std::size_t> todo;
    for (const ScheduleSource &src : sources) {
        AutotuneBaseline b;
        b.source = src.name;
        if (const auto settled = db::RunQueries(database_).settled_baseline(result_.run_id, src.name)) {
            b.run_id = settled->run_id;
            b.sample_id = settled->sample_id;
            if (settled->finished)
                b.median_ms = settled->median_ms;
            else
                b.problem = settled->error;
        } else {
            todo.push_back(out.size());
        }
        out.push_back(std::move(b));
    }
    if (todo.empty()) return out;

    const nlohmann::json config = {{"baseline_of_run", result_.run_id},
                                   {"device", to_string(o_.device)},
                                   {"device_name", result_.device},
                                   {"benchmark_target", result_.benchmark_target},
                                   {"timing", to_json(o_.timing)}};
    auto store_schedule = [&](AutotuneBaseline &b, const std::string &source, const OneShotSample &schedule) {
        std::lock_guard<std::mutex> lock(db_mutex_);
        database_.transaction([&] {
            db::RunInfo run;
            run.pipeline_id = pipeline_id_;
            run.mode = "autotune";
            run.autoscheduler = source;
            run.config = config.dump();
            run.gpusched_version = opt_.gpusched_version;
            b.run_id = store_.start_run(run);
            b.sample_id = store_.add_sample(b.run_id, to_sample_row(schedule, nlohmann::json::object()));
        });
    };
    RoundPlan plan;
    plan.scope = "run-" + std::to_string(result_.run_id);
    plan.items = todo.size();
    plan.jobs = 1; // as before the round: one baseline at a time
    plan.prepare = [&](std::size_t k) {
        AutotuneBaseline &b = out[todo[k]];
        const ScheduleSource &src = sources[todo[k]];
        BaselineBuild bb;
        try {
            bb = build_baseline(
                opt_, src, o_.device, result_.benchmark_target, out_dir_ + "/baselines/" + src.name,
                [&](const OneShotSample &schedule) { store_schedule(b, src.name, schedule); },
                [&] { return reference_.dir; });
        } catch (const db::DbError &) {
            throw; // the database is the run's: its failure ends the run
        } catch (const std::exception &e) {
            bb.build.ok = false;
            bb.build.error = e.what();
            if (b.run_id == 0) { // failed before its rows were written: nothing to store
                b.problem = std::string("build failed: ") + e.what();
                return PreparedWork::nothing();
            }
        }
        return after_build("run " + std::to_string(result_.run_id) + " baseline " + src.name, src.name,
                           bb.build, reference_, result_.device, o_.device);
    };
    plan.measured = [&](std::size_t k, const Measurement &m, const ExecutionRecord &execution) {
        AutotuneBaseline &b = out[todo[k]];
        b.measured_now = true;
        if (m.measured())
            b.median_ms = m.median_ms;
        else
            b.problem = std::string(to_string(m.outcome)) + ": " + m.error;
        std::lock_guard<std::mutex> lock(db_mutex_);
        store_.record_measurement(b.sample_id, measurement_row(m, execution));
        store_.finish_run(b.run_id, m.measured() ? "finished" : "failed",
                          m.measured() ? std::optional<int64_t>(b.sample_id) : std::nullopt, b.problem);
    };
    if (!run_measuring_round(executor_, plan)) {
        // Interrupted: a baseline not timed stays for the resume to measure.
        std::lock_guard<std::mutex> lock(db_mutex_);
        for (std::size_t i : todo)
            if (!out[i].measured_now && out[i].run_id != 0)
                store_.finish_run(out[i].run_id, "interrupted", std::nullopt,
                                  "interrupted while benchmarking");
    }
    return out;
}

// How the run ended, its best sample, its files and its row.
void AutotuneRun::finish() {
    AutotuneResult &r = result_;
    {
        db::RunQueries runs(database_);
        const db::RunTally tally = runs.tally(r.run_id);
        r.samples = tally.samples;
        r.measured = tally.measured;
        r.failed = tally.failed;
        r.spilled = tally.spilled;
        if (const auto best = runs.fastest_measured_sample(r.run_id)) {
            r.best_sample_id = best->id;
            r.best_batch = best->batch;
            r.best_idx = best->idx;
            r.best_ms = best->median_ms;
        }
    }
    r.batches = store_.autotune_batches(r.run_id);
    const bool all_done = static_cast<int>(r.batches.size()) == o_.iterations &&
                          std::all_of(r.batches.begin(), r.batches.end(),
                                      [](const auto &row) { return row.status == "finished"; });
    {
        std::lock_guard<std::mutex> lock(stop_mutex_);
        r.stopped_by = all_done ? "" : stop_reason_.empty() ? "interrupted" : stop_reason_;
    }
    r.end = all_done                        ? AutotuneEnd::Finished
            : r.stopped_by == "interrupted" ? AutotuneEnd::Interrupted
                                            : AutotuneEnd::StoppedByBudget;

    // A baseline measured faster than every sample is what the user gets;
    // its schedule was made in the run's baselines folder (build_baseline).
    const AutotuneBaseline *faster = nullptr;
    for (const AutotuneBaseline &b : r.baselines)
        if (b.median_ms && r.best_ms && *b.median_ms < (faster ? *faster->median_ms : *r.best_ms))
            faster = &b;
    if (faster) {
        r.kept_baseline = faster->source;
        OneShotSample kept;
        kept.dir = out_dir_ + "/baselines/" + faster->source + "/samples/0";
        if (fs::exists(kept.dir)) r.best_files = copy_sample_files(kept, opt_.generator_name, out_dir_);
    } else if (r.best_sample_id) {
        // The best sample's files, from its directory; a sample of an
        // earlier invocation whose files are gone is searched again (the
        // same seed and weights give the same schedule).
        OneShotSample best;
        best.index = r.best_idx;
        best.dir = out_dir_ + "/batches/" + std::to_string(r.best_batch) + "/" + std::to_string(best.index);
        if (!fs::exists(best.dir + "/" + opt_.generator_name + ".schedule.h")) {
            std::string weights_path;
            for (const auto &row : r.batches)
                if (row.batch == r.best_batch) weights_path = row.weights_path;
            generate_sample(batch_options(r.best_batch, weights_path), inputs_, best);
        }
        r.best_files = copy_sample_files(best, opt_.generator_name, out_dir_);
    }
    if (r.end == AutotuneEnd::Finished && !r.best_sample_id) {
        const std::string error = "no sample of the run was measured (" + std::to_string(r.samples) +
                                  " samples, " + std::to_string(r.failed) + " failed)";
        store_.finish_run(r.run_id, "failed", std::nullopt, error);
        throw UserError(error);
    }
    const char *status = r.end == AutotuneEnd::Interrupted ? "interrupted" : "finished";
    database_.transaction([&] {
        store_.finish_run(r.run_id, status,
                          faster ? std::optional<int64_t>(faster->sample_id) : r.best_sample_id);
        if (faster) store_.set_kept_source(r.run_id, faster->source);
    });
    if (!r.stopped_by.empty()) store_.set_run_status(r.run_id, status, r.stopped_by);
}

} // namespace

AutotuneResult run_autotune(const AutotuneOptions &options, const AutotuneProgressFn &progress) {
    const auto t0 = Clock::now();
    AutotuneOptions o = options;
    AutotuneResult result;
    result.db_path = o.batch.db_path;
    std::optional<db::StoredRun> stored;
    if (o.resume_run) {
        stored = load_resumed_run(o);
        result.resumed = true;
    }
    check_options(o);
    const BatchInputs inputs = check_batch_inputs(o.batch);
    if (!inputs.source.searches)
        throw UserError("autotune retrains the gpusched search's model; schedule source '" +
                        o.batch.schedule_source + "' does not search");
    const std::vector<ScheduleSource> baselines = baseline_sources(o.baselines);
    ExecutorOptions eo = executor_options(o.executor, o.device, o.timing, o.batch.gpu);
    eo.stop = o.stop;
    std::unique_ptr<Executor> executor = make_executor(eo);
    if (locate_benchmark_runner_archive().empty())
        throw UnavailableError("the benchmark harness (libgpusched_benchmark_runner.a) was not found; build "
                               "gpusched or set GPUSCHED_BENCHMARK_RUNNER");
    result.target = inputs.target;
    result.benchmark_target = benchmark_target(o.device, inputs.target);
    result.device = executor->device_name();

    AutotuneRun run(o, progress, inputs, *executor, result, t0);
    run.open(stored);
    if (!baselines.empty() && !run.should_stop()) result.baselines = run.measure_baselines(baselines);
    result.setup_seconds = seconds_since(t0);
    for (int b = 0; b < o.iterations; ++b)
        if (!run.run_batch(b)) break;
    run.finish();
    result.wall_seconds = seconds_since(t0);
    return result;
}

} // namespace gpusched
