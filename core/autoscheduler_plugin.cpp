// The autoscheduler plugin "gpusched": loaded by a generator with
// `-p libgpusched_autoscheduler.so` and selected with `autoscheduler=gpusched`
// (Halide 16 and later; options as `autoscheduler.KEY=VALUE`, the keys of
// GPUSCHED_CONFIG) or `-s gpusched auto_schedule=true` (Halide 14, options
// only through GPUSCHED_CONFIG), it builds the function DAG of
// the pipeline, runs the beam search (or replays a record), keeps the naive
// schedule instead where the model predicts it cheaper, applies the
// schedule to the Funcs, and hands back the schedule source and the
// featurization; the search record goes to the config's record_path.
// Every error reaches the user as a Halide user_error, so the generator
// exits non-zero with the message.

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sys/resource.h>

#include <Halide.h>

#include "common/cpu_seconds.h"
#include "common/elapsed.h"
#include "core/beam_search.h"
#include "core/device_memory.h"
#include "core/function_dag.h"
#include "core/gpu_fill.h"
#include "core/halide_compat.h"
#include "core/launch_check.h"
#include "core/naive_schedule.h"
#include "core/reduction_split_search.h"
#include "core/roofline.h"
#include "core/schedule_apply.h"
#include "core/search_config.h"
#include "core/search_cost_model.h"
#include "core/search_record.h"
#include "core/search_space.h"
#include "costmodel/featurization_blob.h"
#include "costmodel/state_sampling_cost_model.h"

namespace gpusched {
namespace {

double peak_rss_mb() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0; // Linux reports KiB
}

// The cost model the search ranks states with: the config's, wrapped in
// a StateSamplingCostModel (set in `sampler`) where the config dumps states.
std::unique_ptr<CostModel> search_model(const PluginConfig &cfg, StateSamplingCostModel *&sampler) {
    std::unique_ptr<CostModel> model = create_search_cost_model(cfg.cost_model_config, cfg.gpu);
    if (!cfg.dump_states_path.empty()) {
        auto wrapped =
            std::make_unique<StateSamplingCostModel>(std::move(model), cfg.dump_states_max, cfg.search.seed);
        sampler = wrapped.get();
        model = std::move(wrapped);
    }
    return model;
}

// The schedule the call keeps, and how it was picked.
struct PickedSchedule {
    SearchResult result;
    const char *picked = "search"; // "search", "replay" or "naive"
    // The search's pick's predicted cost (NaN where nothing was searched).
    double search_cost = std::numeric_limits<double>::quiet_NaN();
    nlohmann::json split_echo; // the reduction split search's counts and choices
};

// Where the model predicts the naive schedule cheaper than the search's
// pick, the naive one is kept, with the search's statistics.
bool keep_naive_if_cheaper(const std::optional<SearchResult> &naive, const SearchResult &searched,
                           PickedSchedule &pick) {
    pick.search_cost = searched.cost;
    if (!naive || !(naive->cost < searched.cost)) return false;
    pick.result = *naive;
    pick.result.stats = searched.stats;
    pick.picked = "naive";
    return true;
}

// The reduction split search's counts, costs and choices, for the record.
nlohmann::json reduction_split_echo(const ReductionSplitChoice &choice) {
    // NaN (not searched) is written as null.
    auto cost_or_null = [](double c) { return std::isnan(c) ? nlohmann::json() : nlohmann::json(c); };
    return {{"variants_ranked", choice.variants_ranked},
            {"variants_refined", choice.variants_refined},
            {"states_featurized_all", choice.states_featurized_all},
            {"unsplit_cost", cost_or_null(choice.unsplit_cost)},
            {"unsplit_refined_cost", cost_or_null(choice.unsplit_refined_cost)},
            {"seconds_ranking", choice.seconds_ranking},
            {"seconds_refining", choice.seconds_refining},
            {"seconds_final", choice.seconds_final},
            {"ranking", choice.ranking},
            {"refinements", choice.refinements},
            {"without_in_block", choice.without_in_block}};
}

// The search with reduction splits; where a split variant wins, the
// pipeline's outputs, DAG and splits become the variant's.
void search_with_reduction_splits(std::vector<Halide::Internal::Function> &outputs,
                                  std::unique_ptr<FunctionDAG> &dag, std::vector<ReductionSplit> &splits,
                                  CostModel &model, const PluginConfig &cfg,
                                  const std::optional<SearchResult> &naive, PickedSchedule &pick) {
    ReductionSplitChoice choice =
        search_reduction_splits(outputs, *dag, model, cfg.gpu, cfg.search, cfg.atomic_reductions,
                                cfg.in_block_reductions, cfg.split_tie_tolerance);
    pick.split_echo = reduction_split_echo(choice);
    if (keep_naive_if_cheaper(naive, choice.result, pick)) {
        // The pipeline as written, unsplit.
    } else if (choice.splits.empty()) {
        pick.result = std::move(choice.result);
    } else {
        // Split the pipeline's own Funcs the way the chosen variant's
        // copy was, and take its decisions over by Func name.
        splits = choice.splits;
        apply_reduction_splits(outputs, splits);
        dag = std::make_unique<FunctionDAG>(outputs);
        mark_in_block_combining(*dag, splits);
        model.set_pipeline(pipeline_features(*dag));
        SearchResult applied =
            evaluate_decisions(*dag, model, cfg.gpu, decisions_from_json(*dag, choice.decisions));
        applied.stats = choice.result.stats;
        pick.result = std::move(applied);
    }
}

// The search (with reduction splits where the config asks), timed.
void search_schedule(std::vector<Halide::Internal::Function> &outputs, std::unique_ptr<FunctionDAG> &dag,
                     std::vector<ReductionSplit> &splits, CostModel &model, const PluginConfig &cfg,
                     const std::optional<SearchResult> &naive, PickedSchedule &pick) {
    const auto wall_start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    if (!cfg.split_reductions) {
        SearchResult searched = beam_search(*dag, model, cfg.gpu, cfg.search);
        if (!keep_naive_if_cheaper(naive, searched, pick)) pick.result = std::move(searched);
    } else {
        search_with_reduction_splits(outputs, dag, splits, model, cfg, naive, pick);
    }
    // The search's time is all of it: the pipeline as written, the
    // split variants ranked, and the chosen one (the other statistics
    // are the chosen pipeline's full search).
    pick.result.stats.seconds_total = seconds_since(wall_start);
    pick.result.stats.cpu_seconds_total = process_cpu_seconds() - cpu_start;
}

void write_sampled_states(StateSamplingCostModel *sampler, const PluginConfig &cfg) {
    if (!sampler) return;
    try {
        sampler->write(cfg.dump_states_path);
    } catch (const std::exception &e) {
        throw UserError(std::string("gpusched config: key \"dump_states_path\": ") + e.what());
    }
}

// Applies the picked schedule to the pipeline and hands back its source
// and featurization in `results`.
void hand_back_schedule(const Halide::Pipeline &pipeline, const PluginConfig &cfg, const FunctionDAG &dag,
                        const std::vector<ReductionSplit> &splits,
                        const std::map<std::string, int> &get_func_index, const PickedSchedule &pick,
                        Halide::AutoSchedulerResults *results) {
    const SearchResult &result = pick.result;
    std::string body = schedule_pipeline(dag, result.decisions, splits, get_func_index, true);
    // The search's footprints decided these sizes; Halide's bounds inference
    // decides the launch: checked in the lowering that compiles this
    // schedule next (core/launch_check.h).
    if (cfg.check_launches)
        check_launches_when_lowered(pipeline, cfg.gpu, dag.estimated_shapes());
    else
        no_launch_check(pipeline);
    name_results(results, "gpusched");
    std::string header = "    // gpusched: predicted cost " + std::to_string(result.cost);
    if (std::string(pick.picked) == "naive")
        header += std::isnan(pick.search_cost) ? " (the naive schedule)"
                                               : " (the naive schedule: the search's pick was predicted " +
                                                     std::to_string(pick.search_cost) + ")";
    results->schedule_source = header + "\n" + body;
    std::vector<unsigned char> blob = serialize_featurization(pipeline_features(dag), result.features);
    results->featurization.assign(blob.begin(), blob.end());
}

// The search record, written to the config's record_path.
void write_record(const PluginConfig &cfg, const FunctionDAG &dag, const std::vector<ReductionSplit> &splits,
                  bool replay, const PickedSchedule &pick, const Roofline &bound,
                  const std::optional<SearchResult> &naive, const std::string &naive_outside_search,
                  std::chrono::steady_clock::time_point call_wall_start, double call_cpu_start) {
    const SearchResult &result = pick.result;
    nlohmann::json rec = record_to_json(dag, result, echo_plugin_config(cfg), replay, peak_rss_mb());
    rec["reduction_splits"] = reduction_splits_to_json(splits);
    rec["gpu_fill"] = gpu_fill_to_json(gpu_fill(dag, result.decisions, result.features, cfg.gpu));
    if (!pick.split_echo.is_null()) rec["reduction_split_search"] = pick.split_echo;
    rec["picked"] = pick.picked;
    rec["device_bytes"] = device_bytes(dag, result.decisions);
    rec["roofline"] = {{"bytes", bound.bytes},
                       {"operations", bound.operations},
                       {"memory_ms", bound.memory_ms},
                       {"compute_ms", bound.compute_ms},
                       {"bound_ms", bound.bound_ms()}};
    rec["naive_cost"] = naive ? nlohmann::json(naive->cost) : nlohmann::json();
    rec["naive_outside_search"] =
        naive_outside_search.empty() ? nlohmann::json() : nlohmann::json(naive_outside_search);
    rec["search_cost"] = std::isnan(pick.search_cost) ? nlohmann::json() : nlohmann::json(pick.search_cost);
    rec["statistics"]["seconds_autoschedule"] = seconds_since(call_wall_start);
    rec["statistics"]["cpu_seconds_autoschedule"] = cpu_with_children_seconds() - call_cpu_start;
    std::ofstream out(cfg.record_path);
    if (!out) throw UserError("gpusched config: key \"record_path\": cannot write '" + cfg.record_path + "'");
    out << rec.dump(2) << "\n";
}

void autoschedule(const Halide::Pipeline &pipeline, const Halide::Target &target,
                  const AutoschedulerOptions &options, Halide::AutoSchedulerResults *results) {
    if (!target.has_gpu_feature()) {
        throw UserError("gpusched: target '" + target.to_string() +
                        "' has no GPU feature; this autoscheduler schedules for GPUs (add cuda or opencl)");
    }
    // The whole call, as Halide's own autoschedulers time theirs (Anderson2021
    // prints "Time taken for autoscheduler" over its DAG, search and schedule
    // application): the DAG, the search, the reduction splits, applying the
    // schedule and the launch check. What a generator run spends outside it
    // (building the pipeline, lowering and code generation) is the same
    // whichever autoscheduler runs.
    const auto call_wall_start = std::chrono::steady_clock::now();
    const double call_cpu_start = cpu_with_children_seconds();
    PluginConfig cfg = load_plugin_config(options);
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs.push_back(f.function());
    // Before any split: the schedule source finds the Funcs of a fresh,
    // unsplit instance of the pipeline by these indices.
    const std::map<std::string, int> get_func_index = get_func_indices(pipeline);
    const bool replay = !cfg.replay_path.empty();
    std::vector<ReductionSplit> splits;
    if (replay) {
        splits = read_record_reduction_splits(cfg.replay_path);
        apply_reduction_splits(outputs, splits);
    }
    auto dag = std::make_unique<FunctionDAG>(outputs);
    mark_in_block_combining(*dag, splits);

    // The pipeline as written, before any split: what no schedule can beat.
    const Roofline bound = roofline(*dag, cfg.gpu);
    StateSamplingCostModel *sampler = nullptr;
    std::unique_ptr<CostModel> model = search_model(cfg, sampler);
    model->set_pipeline(pipeline_features(*dag));
    PickedSchedule pick;
    // The naive schedule, costed on the pipeline as written before any
    // search sets the model to a split variant's pipeline.
    std::optional<SearchResult> naive;
    // Which of the search's own limits the naive schedule breaks (its
    // enumeration never makes such a state; offered, the model still ranks it).
    std::string naive_outside_search;
    if (!replay && (cfg.naive_only || cfg.offer_naive)) {
        Decisions nd = naive_decisions(*dag);
        naive_outside_search = hard_limit_violation(*dag, nd, cfg.gpu, cfg.search.limits);
        naive = evaluate_decisions(*dag, *model, cfg.gpu, nd);
    }
    pick.picked = replay ? "replay" : "search";
    if (replay) {
        Decisions d = read_record_decisions(*dag, cfg.replay_path);
        pick.result = evaluate_decisions(*dag, *model, cfg.gpu, d);
    } else if (cfg.naive_only) {
        pick.result = *naive;
        pick.picked = "naive";
    } else {
        search_schedule(outputs, dag, splits, *model, cfg, naive, pick);
    }

    write_sampled_states(sampler, cfg);
    hand_back_schedule(pipeline, cfg, *dag, splits, get_func_index, pick, results);
    if (!cfg.record_path.empty())
        write_record(cfg, *dag, splits, replay, pick, bound, naive, naive_outside_search, call_wall_start,
                     call_cpu_start);
}

void autoschedule_entry(const Halide::Pipeline &p, const Halide::Target &t,
                        const AutoschedulerOptions &options, Halide::AutoSchedulerResults *results) {
    std::string error;
    try {
        autoschedule(p, t, options, results);
        return;
    } catch (const UserError &e) {
        error = e.what();
    } catch (const Halide::Error &e) {
        error = std::string("gpusched: Halide rejected the schedule: ") + e.what();
    } catch (const std::exception &e) {
        error = std::string("gpusched: ") + e.what();
    }
    halide_user_error(error);
}

struct RegisterGpusched {
    RegisterGpusched() { register_autoscheduler<autoschedule_entry>("gpusched"); }
} register_gpusched;

} // namespace
} // namespace gpusched
