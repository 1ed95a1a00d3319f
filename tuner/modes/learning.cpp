#include "tuner/modes/learning.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "common/elapsed.h"
#include "common/errors.h"
#include "costmodel/default_weights.h"
#include "costmodel/ranking_metrics.h"
#include "costmodel/retraining_check.h"
#include "costmodel/training.h"
#include "costmodel/weights_file.h"
#include "db/database.h"
#include "db/rank_correlation.h"
#include "db/sample_store.h"
#include "tuner/modes/training_groups.h"

namespace gpusched {
namespace {

// A sample: its training group (training_groups.h) and index there.
struct SampleRef {
    std::size_t group = 0;
    int index = 0;
};

// The samples of one (database, run, batch).
struct JudgedBatch {
    std::size_t db = 0;
    int64_t run = 0;
    int batch = 0;
    std::vector<SampleRef> refs;
};

// One pipeline's measured samples, from every database: its training
// groups (one per stage structure), each sample's Autotune batch, and the
// batches to judge (two or more samples each).
struct PipelineData {
    std::string name;
    std::vector<TrainingGroup> groups;
    std::vector<std::size_t> group_db;        // [group]: the database it came from
    std::vector<std::vector<int64_t>> run_of; // [group][index]: its run
    std::vector<std::vector<int>> batch_of;   // [group][index]: its batch number within its run
    std::vector<JudgedBatch> judged;          // batches of two or more samples

    int sample_count() const {
        int n = 0;
        for (const TrainingGroup &g : groups)
            n += static_cast<int>(g.measured.size());
        return n;
    }

    double runtime(const SampleRef &r) const {
        return groups[r.group].samples.runtimes_ms[static_cast<std::size_t>(r.index)];
    }
};

std::string pipeline_name(const db::MeasuredSample &m) {
    return m.params.empty() || m.params == "{}" ? m.generator_name : m.generator_name + " " + m.params;
}

std::vector<PipelineData> load_pipelines(const LearningOptions &opt, std::string &device) {
    if (opt.db_paths.empty()) throw UserError("learning needs at least one sample database (--db)");
    std::map<std::string, PipelineData> by_name;
    std::map<std::tuple<std::string, std::size_t, int64_t, int>, std::vector<SampleRef>> batches;
    std::set<std::string> devices;
    for (std::size_t d = 0; d < opt.db_paths.size(); ++d) {
        const std::string &path = opt.db_paths[d];
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throw UserError("database '" + path + "' does not exist or is not a file");
        db::Database database = db::Database::open_existing(path);
        db::TrainingFilter filter;
        filter.device = opt.device;
        const std::vector<db::MeasuredSample> measured = db::SampleStore(database).measured_samples(filter);
        add_measuring_devices(measured, devices);
        for (TrainingGroup &g : group_for_training(measured, path)) {
            const db::MeasuredSample &first = measured[g.measured.front()];
            PipelineData &p = by_name[pipeline_name(first)];
            p.name = pipeline_name(first);
            std::vector<int> batch_of;
            std::vector<int64_t> run_of;
            for (std::size_t i = 0; i < g.measured.size(); ++i) {
                const db::MeasuredSample &m = measured[g.measured[i]];
                batch_of.push_back(m.batch);
                run_of.push_back(m.run_id);
                batches[{p.name, d, m.run_id, m.batch}].push_back({p.groups.size(), static_cast<int>(i)});
            }
            p.groups.push_back(std::move(g));
            p.batch_of.push_back(std::move(batch_of));
            p.run_of.push_back(std::move(run_of));
            p.group_db.push_back(d);
        }
    }
    refuse_mixed_devices(devices, "");
    if (devices.empty())
        throw UserError("no measured sample with a featurization" +
                        (opt.device.empty() ? std::string() : " on device '" + opt.device + "'") +
                        " in the databases given (measured samples come from `gpusched tune`)");
    device = *devices.begin();
    for (auto &[key, refs] : batches)
        if (refs.size() >= 2)
            by_name[std::get<0>(key)].judged.push_back(
                {std::get<1>(key), std::get<2>(key), std::get<3>(key), refs});
    std::vector<PipelineData> out;
    for (auto &[name, p] : by_name)
        if (!p.judged.empty()) out.push_back(std::move(p));
    if (out.size() < 2)
        throw UserError("hold-one-out needs two or more pipelines with a measured batch of two or more "
                        "samples; the databases have " +
                        std::to_string(out.size()));
    return out;
}

// The model's predicted runtime of every sample, per group.
std::vector<std::vector<double>> predict(const NetworkWeights &weights, const PipelineData &p,
                                         const FormulaContext &ctx) {
    std::vector<std::vector<double>> out;
    for (const TrainingGroup &g : p.groups)
        out.push_back(predict_runtimes(weights, g.samples, ctx));
    return out;
}

ModelFigures judge_batch(const std::vector<std::vector<double>> &predicted, const PipelineData &p,
                         const JudgedBatch &batch) {
    std::vector<double> pred, meas;
    for (const SampleRef &r : batch.refs) {
        pred.push_back(predicted[r.group][static_cast<std::size_t>(r.index)]);
        meas.push_back(p.runtime(r));
    }
    ModelFigures f;
    // A batch with constant predictions or times orders nothing: tau 0, accuracy a coin's.
    f.kendall = db::kendall_tau_b(pred, meas).value_or(0.0);
    f.pairwise = pairwise_accuracy(pred, meas).value_or(0.5);
    f.pick_ratio = 1.0 + best_predicted_slowdown(pred, meas);
    f.top1 = top_k_score(pred, meas, 1);
    f.top5 = top_k_score(pred, meas, 5);
    return f;
}

// Means of figures: arithmetic, except the pick's slowdown over pipelines,
// a ratio one pipeline's outlier would otherwise decide: geometric there.
enum class PickMean { Arithmetic, Geometric };

ModelFigures mean_of(const std::vector<ModelFigures> &v, PickMean pick = PickMean::Geometric) {
    ModelFigures m;
    m.pick_ratio = m.top1 = m.top5 = 0;
    for (const auto &f : v) {
        m.kendall += f.kendall;
        m.pairwise += f.pairwise;
        m.pick_ratio += pick == PickMean::Geometric ? std::log(f.pick_ratio) : f.pick_ratio;
        m.top1 += f.top1;
        m.top5 += f.top5;
    }
    const double n = static_cast<double>(std::max<std::size_t>(1, v.size()));
    m.kendall /= n;
    m.pairwise /= n;
    m.pick_ratio = pick == PickMean::Geometric ? std::exp(m.pick_ratio / n) : m.pick_ratio / n;
    m.top1 /= n;
    m.top5 /= n;
    return m;
}

ModelFigures judge(const std::vector<std::vector<double>> &predicted, const PipelineData &p) {
    std::vector<ModelFigures> per_batch;
    for (const JudgedBatch &b : p.judged)
        per_batch.push_back(judge_batch(predicted, p, b));
    return mean_of(per_batch, PickMean::Arithmetic);
}

double average_sample_ratio(const PipelineData &p) {
    double sum = 0;
    for (const JudgedBatch &b : p.judged) {
        double best = p.runtime(b.refs[0]), mean = 0;
        for (const SampleRef &r : b.refs) {
            best = std::min(best, p.runtime(r));
            mean += p.runtime(r);
        }
        sum += mean / static_cast<double>(b.refs.size()) / best;
    }
    return sum / static_cast<double>(p.judged.size());
}

// The samples of a group that `keep(index)` keeps, in the same stages.
template <typename Keep> PipelineSamples subset(const PipelineSamples &from, const Keep &keep) {
    PipelineSamples s;
    s.name = from.name;
    s.stages = from.stages;
    for (std::size_t i = 0; i < from.states.size(); ++i)
        if (keep(i)) {
            s.states.push_back(from.states[i]);
            s.runtimes_ms.push_back(from.runtimes_ms[i]);
        }
    return s;
}

// The other pipelines' samples of batches below max_batch (kAllBatches: all).
constexpr int kAllBatches = std::numeric_limits<int>::max();

std::vector<PipelineSamples> training_set(const std::vector<PipelineData> &all, std::size_t held_out,
                                          int max_batch) {
    std::vector<PipelineSamples> data;
    for (std::size_t j = 0; j < all.size(); ++j) {
        if (j == held_out) continue;
        for (std::size_t g = 0; g < all[j].groups.size(); ++g) {
            PipelineSamples s = subset(all[j].groups[g].samples,
                                       [&](std::size_t i) { return all[j].batch_of[g][i] < max_batch; });
            if (s.states.size() >= 2) data.push_back(std::move(s));
        }
    }
    return data;
}

// The pipeline's own samples of one run before `batch`: what Autotune's
// retraining after batch - 1 trains on (its default, --train-on run).
std::vector<PipelineSamples> earlier_batches(const PipelineData &p, const JudgedBatch &until) {
    std::vector<PipelineSamples> data;
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
        if (p.group_db[g] != until.db) continue;
        PipelineSamples s = subset(p.groups[g].samples, [&](std::size_t i) {
            return p.run_of[g][i] == until.run && p.batch_of[g][i] < until.batch;
        });
        if (s.states.size() >= 2) data.push_back(std::move(s));
    }
    return data;
}

int count_samples(const std::vector<PipelineSamples> &data) {
    int n = 0;
    for (const auto &p : data)
        n += static_cast<int>(p.states.size());
    return n;
}

// Runs tasks 0..n-1 on `jobs` threads; the first exception is rethrown
// once every thread has stopped.
template <typename Task> void run_parallel(std::size_t n, int jobs, const Task &task) {
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto worker = [&] {
        for (std::size_t i; (i = next++) < n;) {
            try {
                task(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next = n;
            }
        }
    };
    const std::size_t threads = std::min<std::size_t>(
        n, static_cast<std::size_t>(jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency())));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back(worker);
    for (auto &t : pool)
        t.join();
    if (failure) std::rethrow_exception(failure);
}

// What every model is judged with: the starting weights (and the formula
// version they were trained for) and the options each retraining uses.
struct Models {
    WeightsFile start;
    FormulaContext start_ctx;
    TrainingOptions training;
};

// Hold-one-out, and the learning curve's models: for each pipeline, the
// start trained on all other pipelines' samples, and on only their first
// curve[c] batches. Adds each curve point's training samples to curve_trained.
void judge_held_out(const std::vector<PipelineData> &data, const Models &m, const std::vector<int> &curve,
                    int jobs, LearningReport &report, std::vector<int> &curve_trained) {
    std::mutex curve_mutex;
    // Task t: pipeline t / (curve + 1); slot 0 all batches, slot s the first curve[s - 1].
    run_parallel(data.size() * (curve.size() + 1), jobs, [&](std::size_t t) {
        const std::size_t i = t / (curve.size() + 1), slot = t % (curve.size() + 1);
        const int max_batch = slot == 0 ? kAllBatches : curve[slot - 1];
        const std::vector<PipelineSamples> train = training_set(data, i, max_batch);
        if (train.empty()) return;
        NetworkWeights weights = m.start.weights;
        train_network(weights, train, m.training);
        const ModelFigures f = judge(predict(weights, data[i], m.training.formula), data[i]);
        PipelineLearning &r = report.pipelines[i];
        if (slot == 0) {
            r.held_out = f;
            r.trained_on = count_samples(train);
        } else {
            r.curve[slot - 1] = f;
            std::lock_guard<std::mutex> lock(curve_mutex);
            curve_trained[slot - 1] += count_samples(train);
        }
    });
}

// Autotune's own loop: each batch after a run's first, judged by the start
// retrained on the run's earlier batches of this pipeline alone (adopted
// always, and under --retrain if-better), against the start.
void judge_autotune_loop(const std::vector<PipelineData> &data, const Models &m,
                         const std::vector<std::vector<std::vector<double>>> &start_predictions, int jobs,
                         LearningReport &report) {
    struct Task {
        std::size_t pipeline, batch;
    };
    std::vector<Task> tasks;
    for (std::size_t i = 0; i < data.size(); ++i)
        for (std::size_t j = 0; j < data[i].judged.size(); ++j)
            if (data[i].judged[j].batch > 0) tasks.push_back({i, j});
    struct Figures {
        ModelFigures start, always, if_better;
        bool kept = false; // if-better kept the start
    };
    std::vector<std::optional<Figures>> judged(tasks.size());
    run_parallel(tasks.size(), jobs, [&](std::size_t t) {
        const PipelineData &p = data[tasks[t].pipeline];
        const JudgedBatch &batch = p.judged[tasks[t].batch];
        const std::vector<PipelineSamples> train = earlier_batches(p, batch);
        if (train.empty()) return;
        NetworkWeights weights = m.start.weights;
        train_network(weights, train, m.training);
        Figures f;
        f.start = judge_batch(start_predictions[tasks[t].pipeline], p, batch);
        f.always = judge_batch(predict(weights, p, m.training.formula), p, batch);
        f.kept = cross_validate_retraining(m.start.weights, train, m.training).keep_start();
        f.if_better = f.kept ? f.start : f.always;
        judged[t] = f;
    });
    // Within 1%: the same pick, or one as fast.
    auto slower = [](const ModelFigures &a, const ModelFigures &b) {
        return a.pick_ratio > b.pick_ratio * 1.01;
    };
    for (std::size_t i = 0; i < data.size(); ++i) {
        std::vector<ModelFigures> before, after, guarded;
        PipelineLearning &r = report.pipelines[i];
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            if (tasks[t].pipeline != i || !judged[t]) continue;
            const Figures &f = *judged[t];
            before.push_back(f.start);
            after.push_back(f.always);
            guarded.push_back(f.if_better);
            r.in_run_pick_slower += slower(f.always, f.start);
            r.in_run_pick_faster += slower(f.start, f.always);
            r.if_better_kept += f.kept;
            r.if_better_pick_slower += slower(f.if_better, f.start);
            r.if_better_pick_faster += slower(f.start, f.if_better);
        }
        r.in_run_batches = static_cast<int>(before.size());
        if (!before.empty()) {
            r.in_run_start = mean_of(before, PickMean::Arithmetic);
            r.in_run = mean_of(after, PickMean::Arithmetic);
            r.in_run_if_better = mean_of(guarded, PickMean::Arithmetic);
        }
    }
}

// The means over pipelines and the learning curve, from the start to the
// full hold-one-out models (most_batches: the most any run has).
void summarize(const std::vector<int> &curve, const std::vector<int> &curve_trained, int most_batches,
               LearningReport &report) {
    std::vector<ModelFigures> starts, held, in_run_starts, in_run_models, in_run_guarded;
    int all_trained = 0;
    for (const auto &r : report.pipelines) {
        if (r.in_run) {
            in_run_starts.push_back(*r.in_run_start);
            in_run_models.push_back(*r.in_run);
            in_run_guarded.push_back(*r.in_run_if_better);
        }
        starts.push_back(r.start);
        held.push_back(r.held_out);
        all_trained += r.trained_on;
    }
    report.mean_start = mean_of(starts);
    report.mean_held_out = mean_of(held);
    if (!in_run_models.empty()) {
        report.mean_in_run_start = mean_of(in_run_starts);
        report.mean_in_run = mean_of(in_run_models);
        report.mean_in_run_if_better = mean_of(in_run_guarded);
    }
    report.curve.push_back({0, static_cast<int>(starts.size()), 0, false, report.mean_start});
    for (std::size_t c = 0; c < curve.size(); ++c) {
        std::vector<ModelFigures> at;
        for (const auto &r : report.pipelines)
            if (r.curve[c]) at.push_back(*r.curve[c]);
        if (!at.empty())
            report.curve.push_back(
                {curve[c], static_cast<int>(at.size()), curve_trained[c], false, mean_of(at)});
    }
    report.curve.push_back(
        {most_batches, static_cast<int>(held.size()), all_trained, true, report.mean_held_out});
    for (const CurvePoint &p : report.curve)
        if (p.mean.kendall >= 0.6) {
            report.batches_to_kendall_0_6 = p.batches;
            break;
        }
}

} // namespace

LearningReport evaluate_learning(const LearningOptions &opt) {
    const auto t0 = std::chrono::steady_clock::now();
    if (opt.epochs < 1) throw UserError("--epochs must be at least 1");
    for (int k : opt.curve)
        if (k < 1) throw UserError("--curve: batch counts must be 1 or more, not " + std::to_string(k));
    LearningReport report;
    const std::vector<PipelineData> data = load_pipelines(opt, report.device);
    Models m;
    m.start = opt.initial_weights.empty() ? default_weights() : read_weights_file(opt.initial_weights);
    m.start_ctx = formula_context_for(opt.gpu);
    m.start_ctx.version = m.start.formula_version;
    m.training.epochs = opt.epochs;
    m.training.learning_rate = opt.learning_rate;
    m.training.anchor_weight = opt.anchor_weight;
    m.training.seed = opt.seed;
    m.training.formula = formula_context_for(opt.gpu);
    m.training.initial_formula_version = m.start.formula_version;

    // The batch counts no pipeline has as many batches as are left out: the
    // model trained on "the first k" would be the full hold-one-out one.
    int most_batches = 0;
    for (const auto &p : data)
        for (const auto &group : p.batch_of)
            for (int b : group)
                most_batches = std::max(most_batches, b + 1);
    std::vector<int> curve;
    for (int k : opt.curve)
        if (k < most_batches) curve.push_back(k);

    report.pipelines.resize(data.size());
    // The start's predictions, once: every model is judged against them.
    std::vector<std::vector<std::vector<double>>> start_predictions;
    for (const PipelineData &p : data)
        start_predictions.push_back(predict(m.start.weights, p, m.start_ctx));
    for (std::size_t i = 0; i < data.size(); ++i) {
        PipelineLearning &r = report.pipelines[i];
        r.name = data[i].name;
        r.samples = data[i].sample_count();
        r.batches = static_cast<int>(data[i].judged.size());
        r.average_sample_ratio = average_sample_ratio(data[i]);
        r.start = judge(start_predictions[i], data[i]);
        r.curve.assign(curve.size(), std::nullopt);
    }
    std::vector<int> curve_trained(curve.size(), 0);
    judge_held_out(data, m, curve, opt.jobs, report, curve_trained);
    judge_autotune_loop(data, m, start_predictions, opt.jobs, report);
    summarize(curve, curve_trained, most_batches, report);
    report.seconds = seconds_since(t0);
    return report;
}

} // namespace gpusched
