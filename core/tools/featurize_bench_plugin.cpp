// gpusched_featurize_bench: how many stage featurizations per second the
// search's featurizer (core/featurize_schedule.h) delivers on the states of
// a real pipeline, with and without the per-kernel memo (FeatureMemo,
// Anderson et al. 2021 sec. 3.3). A Halide autoscheduler plugin, so it runs
// inside any generator on that generator's own pipeline:
//
//   GPUSCHED_FEATURIZE_BENCH="walks=4 seconds=2 out=FILE" GEN -g NAME -o DIR -e schedule
//       -p <build>/costmodel/libgpusched_featurize_bench.so -s gpusched_featurize_bench
//       target=host-cuda-cuda_capability_86 auto_schedule=true
//
// The states: `walks` seeded random walks through the search space
// (search_space.h, default pruning); at every step that is not a pass-through
// every child is a state the search featurizes (hierarchical sampling off),
// and the walk goes on from a random child. Their loop nests are built
// first; only featurize() is timed, on this thread's CPU clock (the machine
// is shared), repeated over all states until `seconds` have passed:
//  - without memo: featurize(nest, gpu, nullptr) for every state;
//  - with memo: a fresh FeatureMemo per repetition (the search keeps one per
//    search), states in walk order, featurize(nest, gpu, &memo).
// A stage featurization is one feature row delivered (inlined Funcs' rows
// included). The memoized rows are checked equal to the fresh ones, value
// for value. One line of results goes to stdout and, with out=FILE, is
// appended to FILE as JSON. The pipeline is left unscheduled: use
// `-e schedule` only.

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Halide.h>
#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"
#include "core/featurize_schedule.h"
#include "core/function_dag.h"
#include "core/halide_compat.h"
#include "core/loop_nest.h"
#include "core/search_space.h"

namespace gpusched {
namespace {

struct BenchOptions {
    int walks = 4;
    double seconds = 2;
    std::uint64_t seed = 1;
    std::string gpu = "h100";
    std::string out;
    std::size_t max_states = 20000; // bounds the memory the prebuilt loop nests take
};

BenchOptions parse_options() {
    BenchOptions o;
    const char *env = std::getenv("GPUSCHED_FEATURIZE_BENCH");
    std::istringstream in(env ? env : "");
    std::string kv;
    while (in >> kv) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos)
            throw std::runtime_error("GPUSCHED_FEATURIZE_BENCH: want key=value, got " + kv);
        const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        if (k == "walks")
            o.walks = std::stoi(v);
        else if (k == "seconds")
            o.seconds = std::stod(v);
        else if (k == "seed")
            o.seed = std::stoull(v);
        else if (k == "gpu")
            o.gpu = v;
        else if (k == "out")
            o.out = v;
        else if (k == "max_states")
            o.max_states = std::stoull(v);
        else
            throw std::runtime_error("GPUSCHED_FEATURIZE_BENCH: unknown key " + k);
    }
    if (o.walks < 1 || !(o.seconds > 0))
        throw std::runtime_error("GPUSCHED_FEATURIZE_BENCH: walks >= 1 and seconds > 0");
    return o;
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double wall_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// The children of every non-pass-through step of seeded random walks.
std::vector<Decisions> collect_states(const FunctionDAG &dag, const GpuProfile &gpu, const BenchOptions &o) {
    std::vector<Decisions> states;
    std::mt19937_64 rng(o.seed);
    const PruningLimits limits;
    const int steps = num_steps(dag);
    for (int w = 0; w < o.walks && states.size() < o.max_states; ++w) {
        Decisions d = initial_decisions(dag);
        for (int s = 0; s < steps; ++s) {
            const StepId step = step_at(dag, s);
            if (is_pass_through(d, step)) continue;
            std::vector<Decisions> children = enumerate_children(dag, d, step, gpu, limits);
            if (children.empty()) break; // a dead end: the search would drop this state too
            for (const auto &c : children)
                if (states.size() < o.max_states) states.push_back(c);
            d = children[rng() % children.size()];
        }
    }
    return states;
}

struct Rate {
    double rows = 0, states = 0, cpu = 0, wall = 0;
    std::int64_t hits = 0, misses = 0;
};

template <typename F>
Rate time_passes(const std::vector<std::unique_ptr<LoopNest>> &nests, double seconds, F featurize_pass) {
    Rate r;
    const double c0 = thread_cpu_seconds(), w0 = wall_seconds();
    do {
        featurize_pass(r);
        r.states += double(nests.size());
    } while (thread_cpu_seconds() - c0 < seconds);
    r.cpu = thread_cpu_seconds() - c0;
    r.wall = wall_seconds() - w0;
    return r;
}

void run_bench(const Halide::Pipeline &pipeline, const Halide::Target &target,
               Halide::AutoSchedulerResults *results) {
    const BenchOptions o = parse_options();
    const auto gpu = find_builtin_gpu_profile(o.gpu);
    if (!gpu) throw std::runtime_error("GPUSCHED_FEATURIZE_BENCH: unknown gpu " + o.gpu);
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs.push_back(f.function());
    const FunctionDAG dag(outputs);

    const std::vector<Decisions> states = collect_states(dag, *gpu, o);
    std::vector<std::unique_ptr<LoopNest>> nests;
    for (const auto &d : states)
        nests.push_back(std::make_unique<LoopNest>(dag, d));

    // Correctness first: memoized rows equal fresh rows.
    std::int64_t mismatches = 0;
    {
        FeatureMemo memo;
        for (const auto &n : nests) {
            const StateFeatures a = featurize(*n, *gpu, nullptr), b = featurize(*n, *gpu, &memo);
            if (a.stage_ids != b.stage_ids || a.schedule.size() != b.schedule.size()) {
                ++mismatches;
                continue;
            }
            for (std::size_t i = 0; i < a.schedule.size(); ++i)
                if (a.schedule[i].values != b.schedule[i].values) ++mismatches;
        }
    }

    const Rate fresh = time_passes(nests, o.seconds, [&](Rate &r) {
        for (const auto &n : nests)
            r.rows += double(featurize(*n, *gpu, nullptr).schedule.size());
    });
    const Rate memoized = time_passes(nests, o.seconds, [&](Rate &r) {
        FeatureMemo memo;
        for (const auto &n : nests)
            r.rows += double(featurize(*n, *gpu, &memo).schedule.size());
        r.hits += memo.hits;
        r.misses += memo.misses;
    });

    std::string name = pipeline.outputs().empty() ? "?" : pipeline.outputs()[0].name();
    nlohmann::json j = {
        {"pipeline_output", name},
        {"funcs", dag.nodes.size()},
        {"states", states.size()},
        {"rows_per_state", nests.empty() ? 0.0 : fresh.rows / fresh.states},
        {"walks", o.walks},
        {"seed", o.seed},
        {"memo_mismatched_rows", mismatches},
        {"no_memo",
         {{"stage_featurizations_per_cpu_s", fresh.rows / fresh.cpu},
          {"states_per_cpu_s", fresh.states / fresh.cpu},
          {"stage_featurizations_per_wall_s", fresh.rows / fresh.wall}}},
        {"memo",
         {{"stage_featurizations_per_cpu_s", memoized.rows / memoized.cpu},
          {"states_per_cpu_s", memoized.states / memoized.cpu},
          {"stage_featurizations_per_wall_s", memoized.rows / memoized.wall},
          {"kernel_hit_rate",
           double(memoized.hits) / double(std::max<std::int64_t>(1, memoized.hits + memoized.misses))}}},
    };
    std::printf("featurize bench %s: %zu Funcs, %zu states, %.1f rows/state; no memo %.0f stage "
                "featurizations/CPU-s; "
                "memo %.0f (kernel hit rate %.1f%%, speedup %.2fx); memo mismatches %lld\n",
                name.c_str(), dag.nodes.size(), states.size(), fresh.rows / std::max(1.0, fresh.states),
                fresh.rows / fresh.cpu, memoized.rows / memoized.cpu,
                100.0 * j["memo"]["kernel_hit_rate"].get<double>(),
                (memoized.rows / memoized.cpu) / (fresh.rows / fresh.cpu),
                static_cast<long long>(mismatches));
    if (!o.out.empty()) {
        std::ofstream f(o.out, std::ios::app);
        if (!f) throw std::runtime_error("GPUSCHED_FEATURIZE_BENCH: cannot append to " + o.out);
        f << j.dump() << "\n";
    }
    name_results(results, "gpusched_featurize_bench");
    results->schedule_source = "// gpusched_featurize_bench: no schedule (a benchmark of the featurizer)\n";
    (void)target;
}

void entry(const Halide::Pipeline &p, const Halide::Target &t, const AutoschedulerOptions &,
           Halide::AutoSchedulerResults *results) {
    std::string error;
    try {
        run_bench(p, t, results);
        return;
    } catch (const Halide::Error &e) { // no std::exception from Halide 17 on
        error = std::string("gpusched_featurize_bench: ") + e.what();
    } catch (const std::exception &e) {
        error = std::string("gpusched_featurize_bench: ") + e.what();
    }
    halide_user_error(error);
}

struct Register {
    Register() { register_autoscheduler<entry>("gpusched_featurize_bench"); }
} register_bench;

} // namespace
} // namespace gpusched
