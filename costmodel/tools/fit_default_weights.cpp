// gpusched_fit_default_weights: fits the cost-model network to the analytic
// GPU model (its "teacher") on feature rows, and writes a weights file whose
// provenance string says exactly how it was made. This is how the checked-in
// default weights are produced (docs/costmodel.md).
//
//   gpusched_fit_default_weights --rows FILE | --synthesize PIPELINES [--states-per-pipeline N]
//       [--rows-out FILE] [--gpu NAME] [--targets analytic|measured] [--epochs N]
//       [--learning-rate X] [--batch-size N] [--seed N] [--init WEIGHTS]
//       [--pipeline-names TSV] [--holdout-fraction F] [--compare WEIGHTS|default]...
//       [--max-states-per-pipeline N] [--batch-within pipeline|step]
//       [--throughput-weight W] [--ranking-weight W] [--scale-weight W] [--report FILE] --out WEIGHTS
//
// --rows reads a feature-rows file (docs/weights-format.md); --synthesize
// makes rows with tools/synthetic_states (and --rows-out saves them).
// --targets analytic (default) replaces runtimes by the analytic model's
// predictions for --gpu; measured keeps the runtimes stored in the file.
//
// --holdout-fraction F holds out whole pipelines (F of each group of
// --pipeline-names, the table gpusched_merge_feature_rows writes; chosen by
// --seed): training never sees them, and the new weights and every
// --compare weights ("default" = this build's embedded weights) are ranked
// on them against the runtimes (holdout_evaluation.h) with the search's own
// float inference. --max-states-per-pipeline keeps a seeded random subset of
// each training pipeline's states (held-out pipelines keep all). --report
// writes the held-out comparison, per pipeline, as Markdown.
//
// --batch-within step trains on same-step groups (states with the same stage
// ids, at least 4) instead of whole pipelines: the loss compares the samples
// of a batch to the batch's fastest, and a pipeline's fastest sampled state
// is one with few Funcs decided yet, so with whole-pipeline batches the loss
// mostly teaches the order of near-empty states; the search only ever
// compares states of one step. Training validation is then per group too.
//
// --throughput-weight and --ranking-weight weigh the loss's two terms
// (network_gradient.h): the paper's relative throughput (default 1) and a
// pairwise ranking term on log predictions (default 0); --scale-weight the
// term that pins the mean log ratio of predicted to target (default 0).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/gpu_profile.h"
#include "costmodel/analytic_cost_model.h"
#include "costmodel/default_weights.h"
#include "costmodel/feature_rows_file.h"
#include "costmodel/holdout_evaluation.h"
#include "costmodel/network_cost_model.h"
#include "costmodel/tools/synthetic_states.h"
#include "costmodel/training.h"
#include "costmodel/weights_file.h"

using namespace gpusched;

namespace {

struct Args {
    std::string rows, rows_out, out, init, gpu = "h100", targets = "analytic", pipeline_names, report,
                                           batch_within = "pipeline";
    std::vector<std::string> compare;
    int synthesize = 0, states_per_pipeline = 64, epochs = 300, batch_size = 64, max_states_per_pipeline = 0;
    double learning_rate = 3e-3, holdout_fraction = 0, throughput_weight = 1, ranking_weight = 0,
           scale_weight = 0, variant_ranking_weight = 0;
    unsigned long long seed = 1;
};

[[noreturn]] void usage(const std::string &why) {
    std::fprintf(stderr,
                 "error: %s\nusage: gpusched_fit_default_weights (--rows FILE | --synthesize PIPELINES "
                 "[--states-per-pipeline N] [--rows-out FILE]) [--gpu NAME] [--targets analytic|measured] "
                 "[--epochs N] [--learning-rate X] [--batch-size N] [--seed N] [--init WEIGHTS] "
                 "[--pipeline-names TSV] [--holdout-fraction F] [--compare WEIGHTS|default]... "
                 "[--max-states-per-pipeline N] [--batch-within pipeline|step] [--throughput-weight W] "
                 "[--ranking-weight W] [--scale-weight W] [--variant-ranking-weight W] [--report FILE] --out "
                 "WEIGHTS\n",
                 why.c_str());
    std::exit(2);
}

Args parse(int argc, char **argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(k + " needs a value");
            return argv[++i];
        };
        auto number = [&](const std::string &v) {
            char *end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            if (v.empty() || *end) usage(k + " needs a number, got \"" + v + "\"");
            return d;
        };
        if (k == "--rows")
            a.rows = value();
        else if (k == "--rows-out")
            a.rows_out = value();
        else if (k == "--out")
            a.out = value();
        else if (k == "--init")
            a.init = value();
        else if (k == "--gpu")
            a.gpu = value();
        else if (k == "--targets")
            a.targets = value();
        else if (k == "--synthesize")
            a.synthesize = int(number(value()));
        else if (k == "--states-per-pipeline")
            a.states_per_pipeline = int(number(value()));
        else if (k == "--epochs")
            a.epochs = int(number(value()));
        else if (k == "--batch-size")
            a.batch_size = int(number(value()));
        else if (k == "--learning-rate")
            a.learning_rate = number(value());
        else if (k == "--seed")
            a.seed = static_cast<unsigned long long>(number(value()));
        else if (k == "--pipeline-names")
            a.pipeline_names = value();
        else if (k == "--holdout-fraction")
            a.holdout_fraction = number(value());
        else if (k == "--compare")
            a.compare.push_back(value());
        else if (k == "--max-states-per-pipeline")
            a.max_states_per_pipeline = int(number(value()));
        else if (k == "--report")
            a.report = value();
        else if (k == "--batch-within")
            a.batch_within = value();
        else if (k == "--throughput-weight")
            a.throughput_weight = number(value());
        else if (k == "--ranking-weight")
            a.ranking_weight = number(value());
        else if (k == "--scale-weight")
            a.scale_weight = number(value());
        else if (k == "--variant-ranking-weight")
            a.variant_ranking_weight = number(value());
        else
            usage("unknown argument " + k);
    }
    if (a.out.empty()) usage("--out is required");
    if (a.rows.empty() == (a.synthesize <= 0)) usage("give exactly one of --rows and --synthesize");
    if (a.targets != "analytic" && a.targets != "measured") usage("--targets must be analytic or measured");
    if (!(a.holdout_fraction >= 0 && a.holdout_fraction < 1)) usage("--holdout-fraction must be in [0, 1)");
    if (a.holdout_fraction > 0 && a.rows.empty()) usage("--holdout-fraction needs --rows");
    if (!a.compare.empty() && a.holdout_fraction == 0) usage("--compare needs --holdout-fraction");
    if (a.batch_within != "pipeline" && a.batch_within != "step")
        usage("--batch-within must be pipeline or step");
    if (!(a.throughput_weight >= 0) || !(a.ranking_weight >= 0) || !(a.scale_weight >= 0) ||
        a.throughput_weight + a.ranking_weight <= 0)
        usage("--throughput-weight, --ranking-weight and --scale-weight must be >= 0, and the first two not "
              "both 0");
    if (!(a.variant_ranking_weight >= 0)) usage("--variant-ranking-weight must be >= 0");
    if (a.variant_ranking_weight > 0 && (a.batch_within != "step" || a.pipeline_names.empty()))
        usage("--variant-ranking-weight needs --batch-within step and --pipeline-names (variants share a "
              "name)");
    return a;
}

void progress(int epoch, double loss, void *) {
    if (epoch % 25 == 0) std::fprintf(stderr, "epoch %d: training loss %.5g\n", epoch, loss);
}

// Names pipelines "pipeline <key>" (read_feature_rows) after the table
// gpusched_merge_feature_rows writes (key, name, group, records).
void name_pipelines(const std::string &path, std::vector<PipelineSamples> &data,
                    std::vector<std::string> &groups) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot read the pipeline-names table");
    std::map<std::string, std::pair<std::string, std::string>> by_key;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string key, name, group;
        if (!std::getline(f, key, '\t') || !std::getline(f, name, '\t') || !std::getline(f, group, '\t'))
            throw std::runtime_error(path + ": bad line \"" + line + "\" (want key, name, group, records)");
        by_key[key] = {name, group};
    }
    const std::string prefix = "pipeline ";
    for (std::size_t i = 0; i < data.size(); ++i) {
        const std::string key = data[i].name.substr(prefix.size());
        auto it = by_key.find(key);
        if (it == by_key.end()) throw std::runtime_error(path + ": no line for pipeline key " + key);
        data[i].name = it->second.first;
        groups[i] = it->second.second;
    }
}

PipelineSamples subsample(PipelineSamples p, int max_states, std::mt19937_64 &rng) {
    if (max_states <= 0 || p.states.size() <= static_cast<std::size_t>(max_states)) return p;
    std::vector<std::size_t> idx(p.states.size());
    for (std::size_t i = 0; i < idx.size(); ++i)
        idx[i] = i;
    // Partial Fisher-Yates with our own draws (std::shuffle differs between libraries).
    for (std::size_t i = 0; i < static_cast<std::size_t>(max_states); ++i)
        std::swap(idx[i], idx[i + rng() % (idx.size() - i)]);
    idx.resize(static_cast<std::size_t>(max_states));
    std::sort(idx.begin(), idx.end());
    PipelineSamples out{p.name, std::move(p.stages), {}, {}};
    for (std::size_t i : idx) {
        out.states.push_back(std::move(p.states[i]));
        out.runtimes_ms.push_back(p.runtimes_ms[i]);
    }
    return out;
}

// The rows of a pipeline's complete schedules: its states with the most
// stages decided (the split-variant comparisons are between those).
std::size_t complete_schedule_rows(const std::vector<StateFeatures> &states) {
    std::size_t most = 0;
    for (const auto &s : states)
        most = std::max(most, s.stage_ids.size());
    return most;
}

// Each pipeline's same-step groups (holdout_evaluation.h) of at least
// min_group states as pipelines of their own; smaller groups are dropped.
// final_group_of[i] is the group of pipeline i's complete schedules (its
// states with the most stages decided), or -1 where that group was dropped.
std::vector<PipelineSamples> split_by_step(std::vector<PipelineSamples> pipes, int min_group,
                                           std::vector<long> &final_group_of) {
    std::vector<PipelineSamples> out;
    final_group_of.assign(pipes.size(), -1);
    for (std::size_t pi = 0; pi < pipes.size(); ++pi) {
        PipelineSamples &p = pipes[pi];
        const std::size_t most_rows = complete_schedule_rows(p.states);
        const auto groups = same_step_groups(p.states, min_group);
        for (std::size_t g = 0; g < groups.size(); ++g) {
            PipelineSamples q{p.name + " step group " + std::to_string(g), p.stages, {}, {}};
            if (p.states[static_cast<std::size_t>(groups[g].front())].stage_ids.size() == most_rows)
                final_group_of[pi] = static_cast<long>(out.size());
            for (int i : groups[g]) {
                q.states.push_back(std::move(p.states[static_cast<std::size_t>(i)]));
                q.runtimes_ms.push_back(p.runtimes_ms[static_cast<std::size_t>(i)]);
            }
            out.push_back(std::move(q));
        }
    }
    return out;
}

// The comparable sets of train_network: per name shared by two or more
// pipelines (a pipeline and its reduction-split variants), their groups of
// complete schedules.
std::vector<std::vector<std::size_t>> variant_sets(const std::vector<std::string> &names,
                                                   const std::vector<long> &final_group_of) {
    std::map<std::string, std::vector<std::size_t>> by_name;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (final_group_of[i] < 0) continue;
        auto [it, added] = by_name.try_emplace(names[i]);
        if (added) order.push_back(names[i]);
        it->second.push_back(static_cast<std::size_t>(final_group_of[i]));
    }
    std::vector<std::vector<std::size_t>> sets;
    for (const std::string &n : order)
        if (by_name[n].size() >= 2) sets.push_back(by_name[n]);
    return sets;
}

// Ranks each held-out pipeline's states with the weights through
// NetworkCostModel, the float inference the search itself runs.
std::vector<HeldOutRanking> rank_pipelines(const WeightsFile &weights, const GpuProfile &gpu,
                                           const std::vector<PipelineSamples> &pipes) {
    std::vector<HeldOutRanking> out;
    for (const auto &p : pipes) {
        NetworkCostModel model(weights, gpu);
        model.set_pipeline(p.stages);
        std::vector<const StateFeatures *> ptrs;
        for (const auto &s : p.states)
            ptrs.push_back(&s);
        std::vector<double> predicted;
        model.evaluate(ptrs, predicted);
        out.push_back(rank_held_out(predicted, p.runtimes_ms, p.states));
    }
    return out;
}

// What the search does with a pipeline's split variants, on held-out
// pipelines: in each variant the complete schedule predicted fastest, then
// the variant whose pick is predicted fastest. Its teacher runtime over the
// teacher's fastest complete schedule of any variant, as a geometric mean
// over held-out pipelines with two or more variants (1 = always the best).
struct VariantChoice {
    double geomean_ratio = 1;
    int pipelines = 0, best_variant = 0;
};

VariantChoice variant_choice(const WeightsFile &weights, const GpuProfile &gpu,
                             const std::vector<PipelineSamples> &held_out) {
    struct Pick {
        double predicted, teacher, teacher_best;
    };
    std::map<std::string, std::vector<Pick>> by_name;
    for (const auto &p : held_out) {
        const std::size_t most_rows = complete_schedule_rows(p.states);
        std::vector<const StateFeatures *> complete;
        std::vector<double> teacher;
        for (std::size_t i = 0; i < p.states.size(); ++i)
            if (p.states[i].stage_ids.size() == most_rows) {
                complete.push_back(&p.states[i]);
                teacher.push_back(p.runtimes_ms[i]);
            }
        NetworkCostModel model(weights, gpu);
        model.set_pipeline(p.stages);
        std::vector<double> predicted;
        model.evaluate(complete, predicted);
        const auto best = static_cast<std::size_t>(std::min_element(predicted.begin(), predicted.end()) -
                                                   predicted.begin());
        by_name[p.name].push_back(
            {predicted[best], teacher[best], *std::min_element(teacher.begin(), teacher.end())});
    }
    VariantChoice v;
    double log_sum = 0;
    for (const auto &[name, picks] : by_name) {
        if (picks.size() < 2) continue;
        const Pick &chosen = *std::min_element(picks.begin(), picks.end(), [](const Pick &x, const Pick &y) {
            return x.predicted < y.predicted;
        });
        double best = INFINITY;
        for (const Pick &q : picks)
            best = std::min(best, q.teacher_best);
        log_sum += std::log(chosen.teacher / best);
        v.pipelines++;
        double best_pick = INFINITY;
        for (const Pick &q : picks)
            best_pick = std::min(best_pick, q.teacher);
        v.best_variant += chosen.teacher == best_pick ? 1 : 0;
    }
    if (v.pipelines > 0) v.geomean_ratio = std::exp(log_sum / v.pipelines);
    return v;
}

std::string variant_choice_text(const VariantChoice &v) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "split variants of %d pipelines: the pick %.3fx the best complete schedule (geomean), "
                  "best variant in %d",
                  v.pipelines, v.geomean_ratio, v.best_variant);
    return buf;
}

std::string view_text(const RankingView &v) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "Spearman %.3f, Kendall %.3f, predicted-best slowdown %.1f%%", v.spearman,
                  v.kendall, 100.0 * v.slowdown);
    return buf;
}

std::string summary(const std::vector<HeldOutRanking> &r) {
    std::vector<RankingView> all, step;
    for (const auto &h : r) {
        all.push_back(h.all);
        step.push_back(h.same_step);
    }
    const RankingView ma = mean_view(all), ms = mean_view(step);
    return "all states: " + view_text(ma) + "; same-step groups (" + std::to_string(ms.groups) + " groups, " +
           std::to_string(ms.states) + " states): " + view_text(ms);
}

void write_report(const std::string &path, const std::vector<std::pair<std::string, WeightsFile>> &models,
                  const std::vector<std::vector<HeldOutRanking>> &results,
                  const std::vector<PipelineSamples> &pipes) {
    std::ofstream o(path);
    if (!o) throw std::runtime_error(path + ": cannot write the report");
    char buf[400];
    o << "| pipeline | states | same-step groups (states) | weights | Spearman all | Kendall all | slowdown "
         "all "
         "| Spearman step | Kendall step | slowdown step |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (std::size_t p = 0; p < pipes.size(); ++p) {
        for (std::size_t m = 0; m < models.size(); ++m) {
            const HeldOutRanking &h = results[m][p];
            std::snprintf(buf, sizeof buf,
                          "| %s | %zu | %d (%d) | %s | %.3f | %.3f | %.1f%% | %.3f | %.3f | %.1f%% |\n",
                          pipes[p].name.c_str(), pipes[p].states.size(), h.same_step.groups,
                          h.same_step.states, models[m].first.c_str(), h.all.spearman, h.all.kendall,
                          100 * h.all.slowdown, h.same_step.spearman, h.same_step.kendall,
                          100 * h.same_step.slowdown);
            o << buf;
        }
    }
    for (std::size_t m = 0; m < models.size(); ++m)
        o << "\nMean, " << models[m].first << ": " << summary(results[m]) << "\n";
}

// Rows of synthetic states (tools/synthetic_states), runtimes NaN; saved to
// --rows-out where given.
std::vector<PipelineSamples> synthesize_rows(const Args &a, const GpuProfile &gpu, std::string &rows_origin) {
    std::vector<PipelineSamples> data;
    std::mt19937_64 rng(a.seed);
    std::vector<FeatureRowsRecord> records;
    for (int p = 0; p < a.synthesize; ++p) {
        const SyntheticPipeline sp = random_synthetic_pipeline(rng);
        for (int s = 0; s < a.states_per_pipeline; ++s) {
            FeatureRowsRecord r;
            r.pipeline_key = static_cast<std::uint32_t>(p);
            r.runtime_ms = NAN;
            r.pipeline = sp.stages;
            r.state = random_synthetic_state(sp, gpu, rng);
            records.push_back(std::move(r));
        }
    }
    if (!a.rows_out.empty()) write_feature_rows(a.rows_out, records);
    rows_origin = "synthetic rows from costmodel/tools/synthetic_states (2-D stencil chains; seed " +
                  std::to_string(a.seed) + ", " + std::to_string(a.synthesize) + " pipelines x " +
                  std::to_string(a.states_per_pipeline) + " states)";
    // Round-trip through the file format so both paths train on identical data.
    if (!a.rows_out.empty())
        data = read_feature_rows(a.rows_out);
    else {
        for (const auto &r : records) {
            if (data.size() <= r.pipeline_key)
                data.push_back({"pipeline " + std::to_string(r.pipeline_key), r.pipeline, {}, {}});
            data[r.pipeline_key].states.push_back(r.state);
            data[r.pipeline_key].runtimes_ms.push_back(r.runtime_ms);
        }
    }
    return data;
}

// The rows to fit: synthesized or read from --rows; rows_origin says which.
std::vector<PipelineSamples> load_rows(const Args &a, const GpuProfile &gpu, std::string &rows_origin) {
    if (a.synthesize > 0) return synthesize_rows(a, gpu, rows_origin);
    std::vector<PipelineSamples> data = read_feature_rows(a.rows);
    rows_origin = "rows file " + a.rows;
    return data;
}

// Teacher runtimes for every pipeline, held-out ones included.
void set_analytic_runtimes(std::vector<PipelineSamples> &data, const GpuProfile &gpu) {
    for (auto &p : data) {
        AnalyticGpuCostModel teacher(gpu);
        teacher.set_pipeline(p.stages);
        std::vector<const StateFeatures *> ptrs;
        for (const auto &s : p.states)
            ptrs.push_back(&s);
        teacher.evaluate(ptrs, p.runtimes_ms);
    }
}

// The pipelines trained on (batched as --batch-within says) and those held
// out whole.
struct TrainingSets {
    std::vector<PipelineSamples> train, held_out;
    std::size_t training_pipelines = 0; // before any split by step
    std::vector<std::vector<std::size_t>> comparable_sets;
};

// Moves data's pipelines into the training and held-out sets.
TrainingSets split_training_sets(const Args &a, std::vector<PipelineSamples> &data) {
    TrainingSets sets;
    std::vector<std::string> groups(data.size(), ".");
    if (!a.pipeline_names.empty()) name_pipelines(a.pipeline_names, data, groups);

    // Whole pipelines held out; the rest trained on (possibly subsampled).
    std::vector<std::string> names;
    for (const auto &p : data)
        names.push_back(p.name);
    const std::vector<bool> held = choose_held_out(groups, a.holdout_fraction, a.seed, names);
    std::vector<PipelineSamples> &train = sets.train, &held_out = sets.held_out;
    std::mt19937_64 subsample_rng(a.seed);
    for (std::size_t i = 0; i < data.size(); ++i) {
        if (held[i])
            held_out.push_back(std::move(data[i]));
        else
            train.push_back(subsample(std::move(data[i]), a.max_states_per_pipeline, subsample_rng));
    }
    data.clear();
    sets.training_pipelines = train.size();
    if (a.batch_within == "step") {
        std::vector<std::string> train_names;
        for (const auto &p : train)
            train_names.push_back(p.name);
        std::vector<long> final_group_of;
        train = split_by_step(std::move(train), 4, final_group_of);
        if (a.variant_ranking_weight > 0) sets.comparable_sets = variant_sets(train_names, final_group_of);
    }
    return sets;
}

struct SetSizes {
    std::size_t states = 0, rows = 0; // trained on
    std::size_t held_states = 0;
};

// The sets' sizes, also printed to stderr.
SetSizes report_set_sizes(const Args &a, const TrainingSets &sets) {
    SetSizes n;
    for (const auto &p : sets.train) {
        n.states += p.states.size();
        for (const auto &s : p.states)
            n.rows += s.schedule.size();
    }
    for (const auto &p : sets.held_out)
        n.held_states += p.states.size();
    std::fprintf(stderr,
                 "training on %zu pipelines (%zu states, %zu stage rows, batches within %s: %zu sets); "
                 "%zu pipelines (%zu states) held out\n",
                 sets.training_pipelines, n.states, n.rows, a.batch_within.c_str(), sets.train.size(),
                 sets.held_out.size(), n.held_states);
    if (!sets.comparable_sets.empty())
        std::fprintf(stderr, "ranking across the complete schedules of %zu pipelines' split variants\n",
                     sets.comparable_sets.size());
    return n;
}

TrainingOptions training_options(const Args &a, const WeightsFile &start, const TrainingSets &sets,
                                 const GpuProfile &gpu) {
    TrainingOptions opt;
    opt.initial_formula_version = start.formula_version;
    opt.epochs = a.epochs;
    opt.learning_rate = a.learning_rate;
    opt.batch_size = a.batch_size;
    opt.seed = a.seed;
    opt.throughput_weight = a.throughput_weight;
    opt.ranking_weight = a.ranking_weight;
    opt.scale_weight = a.scale_weight;
    opt.comparable_sets = sets.comparable_sets;
    opt.comparable_ranking_weight = a.variant_ranking_weight;
    opt.formula = formula_context_for(gpu);
    opt.progress = progress;
    return opt;
}

// The weights file's provenance: how the network was fitted, to what, on
// which rows, and its validation before and after.
std::string fit_provenance(const Args &a, const GpuProfile &gpu, const std::string &rows_origin,
                           const TrainingSets &sets, const SetSizes &n, const TrainingReport &rep) {
    const std::size_t training_pipelines = sets.training_pipelines, states = n.states, rows = n.rows;
    return "gpusched_fit_default_weights: network fitted by Adam (lr " + std::to_string(a.learning_rate) +
           ", batch " + std::to_string(a.batch_size) + ", " + std::to_string(a.epochs) + " epochs, seed " +
           std::to_string(a.seed) + (a.init.empty() ? ", from NetworkWeights::initial" : ", from " + a.init) +
           ", loss " + std::to_string(a.throughput_weight) + " x relative throughput + " +
           std::to_string(a.ranking_weight) + " x pairwise ranking + " + std::to_string(a.scale_weight) +
           " x mean log ratio squared" +
           (a.variant_ranking_weight > 0
                ? ", + " + std::to_string(a.variant_ranking_weight) +
                      " x pairwise ranking across the complete schedules of " +
                      std::to_string(sets.comparable_sets.size()) + " pipelines' reduction-split variants"
                : std::string()) +
           ") to " +
           (a.targets == "analytic" ? "the analytic GPU model's predictions for GPU profile " + gpu.name
                                    : std::string("measured runtimes")) +
           " on " + rows_origin + "; " + std::to_string(training_pipelines) + " pipelines, " +
           std::to_string(states) + " states, " + std::to_string(rows) + " stage rows" +
           (a.batch_within == "step"
                ? ", batches within " + std::to_string(sets.train.size()) + " same-step groups of >= 4 states"
                : std::string()) +
           "; validation (20% of each " + (a.batch_within == "step" ? "group" : "pipeline") +
           "'s states) before: " + describe(rep.validation_before) +
           "; after: " + describe(rep.validation_after);
}

// The held-out pipelines ranked by the new weights and those --compare
// names: printed, added to the provenance, and written to --report.
void evaluate_held_out(const Args &a, const GpuProfile &gpu, const NetworkWeights &w,
                       const TrainingSets &sets, std::size_t held_states, std::string &prov) {
    const std::vector<PipelineSamples> &held_out = sets.held_out;
    std::vector<std::pair<std::string, WeightsFile>> models = {{"new", WeightsFile{w, ""}}};
    for (const std::string &c : a.compare)
        models.emplace_back(c, c == "default" ? default_weights() : read_weights_file(c));
    std::vector<std::vector<HeldOutRanking>> results;
    for (const auto &m : models)
        results.push_back(rank_pipelines(m.second, gpu, held_out));
    std::string names;
    std::set<std::string> named; // a pipeline's split variants share its name
    for (const auto &p : held_out)
        if (named.insert(p.name).second) names += (names.empty() ? "" : ", ") + p.name;
    prov += "; held out whole (never trained on): " + std::to_string(held_out.size()) + " pipelines (" +
            names + "), " + std::to_string(held_states) + " states";
    for (std::size_t m = 0; m < models.size(); ++m) {
        const std::string line =
            summary(results[m]) + "; " + variant_choice_text(variant_choice(models[m].second, gpu, held_out));
        std::printf("held out, %s: %s\n", models[m].first.c_str(), line.c_str());
        prov += "; held out, " + (m == 0 ? std::string("these weights") : models[m].first) + ": " + line;
    }
    if (!a.report.empty()) write_report(a.report, models, results, held_out);
}

} // namespace

int main(int argc, char **argv) {
    const Args a = parse(argc, argv);
    try {
        const auto gpu = find_builtin_gpu_profile(a.gpu);
        if (!gpu) usage("unknown --gpu " + a.gpu + " (known: " + builtin_gpu_profile_names() + ")");

        std::string rows_origin;
        std::vector<PipelineSamples> data = load_rows(a, *gpu, rows_origin);
        if (a.targets == "analytic") set_analytic_runtimes(data, *gpu);
        const TrainingSets sets = split_training_sets(a, data);
        const SetSizes n = report_set_sizes(a, sets);

        const WeightsFile start =
            a.init.empty() ? WeightsFile{NetworkWeights::initial(a.seed), ""} : read_weights_file(a.init);
        NetworkWeights w = start.weights;
        const TrainingReport rep = train_network(w, sets.train, training_options(a, start, sets, *gpu));

        std::string prov = fit_provenance(a, *gpu, rows_origin, sets, n, rep);
        std::printf(
            "train before:      %s\ntrain after:       %s\nvalidation before: %s\nvalidation after:  %s\n",
            describe(rep.train_before).c_str(), describe(rep.train_after).c_str(),
            describe(rep.validation_before).c_str(), describe(rep.validation_after).c_str());

        if (!sets.held_out.empty()) evaluate_held_out(a, *gpu, w, sets, n.held_states, prov);
        write_weights_file(a.out, WeightsFile{w, prov});
        std::printf("wrote %s\n", a.out.c_str());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
