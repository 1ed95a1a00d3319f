#include "core/beam_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>

#include "common/elapsed.h"
#include "core/beam_pass.h"
#include "core/featurize_schedule.h"
#include "core/loop_nest.h"

namespace gpusched {

namespace {

using detail::Clock;
using detail::Frozen;
using detail::Pass;
using detail::RootTilingCache;
using detail::State;

double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Portable uniform double in [0, 1) from the generator (std::uniform_real
// distribution's algorithm is implementation-defined).
double uniform01(std::mt19937_64 &rng) {
    return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

void materialize(State &s) {
    if (s.changed < 0) return;
    auto d = std::make_shared<Decisions>(*s.base);
    d->funcs[s.changed] = std::move(s.change);
    s.d = std::move(d);
    s.base.reset();
    s.changed = -1;
}

constexpr size_t kChunk = 2048;

} // namespace

namespace detail {

// The priced states the beam selected, featurized and costed by the
// model, as every other state is when it is made.
void Pass::featurize_priced(std::vector<State> &beam) {
    std::vector<size_t> selected;
    for (State &s : beam) {
        if (!s.priced) continue;
        auto t = Clock::now();
        work = *s.d;
        retile_wanted = retile_armed = false;
        adding_node = -1;
        s.features = std::make_shared<const StateFeatures>(featurize(nest_for_work(), gpu, memo));
        stats.seconds_featurize += seconds_since(t);
        stats.states_featurized++;
        s.priced = false;
        selected.push_back(static_cast<size_t>(&s - beam.data()));
    }
    cost(beam, selected);
}

// Avoid known states (sec. 4.5): structures expanded in earlier passes
// are ranked as if they cost more, once per time seen.
void Pass::rank(State &c) const {
    double penalty = 1;
    if (earlier && index > 0) {
        auto it = earlier->find(c.changed >= 0 ? c.penalty_hash : structural_hash(*c.d, index));
        if (it != earlier->end()) penalty += it->second;
    }
    c.ranked_cost = c.cost * penalty;
}

// Costs the featurized children in one CostModel batch.
void Pass::cost_pending() {
    cost(children, fresh);
}

// Costs states[i] for every i in `which` in one CostModel batch, and
// empties `which`.
void Pass::cost(std::vector<State> &states, std::vector<size_t> &which) {
    if (which.empty()) return;
    auto t2 = Clock::now();
    std::vector<const StateFeatures *> batch;
    batch.reserve(which.size());
    for (size_t i : which)
        batch.push_back(states[i].features.get());
    std::vector<double> costs;
    std::vector<std::vector<double>> per_stage;
    model.evaluate(batch, costs, &per_stage);
    stats.states_costed += static_cast<int64_t>(batch.size());
    for (size_t q = 0; q < which.size(); q++) {
        State &c = states[which[q]];
        c.cost = costs[q];
        c.stage_costs = std::make_shared<const std::vector<double>>(
            per_stage.size() > q ? std::move(per_stage[q]) : std::vector<double>{});
        rank(c);
    }
    which.clear();
    stats.seconds_cost += seconds_since(t2);
}

// Without dropout only the beam_size best-ranked children can be
// selected: drop the rest now, keeping enumeration order among the kept
// so the final stable sort (ties by order) selects exactly as before.
void Pass::trim(int beam_size) {
    if (config.dropout > 0 || children.size() <= static_cast<size_t>(beam_size)) return;
    std::vector<size_t> order(children.size());
    for (size_t i = 0; i < order.size(); i++)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return children[a].ranked_cost < children[b].ranked_cost; });
    order.resize(beam_size);
    std::sort(order.begin(), order.end());
    std::vector<State> kept;
    kept.reserve(order.size());
    for (size_t i : order)
        kept.push_back(std::move(children[i]));
    children = std::move(kept);
}

std::vector<State> Pass::run(std::vector<State> beam) {
    const int steps = num_steps(dag);
    const int beam_size = std::max(1, config.beam_size);
    for (int step = 0; step < steps; step++) {
        StepId id = step_at(dag, step);
        const int64_t enumerated0 = stats.states_enumerated, hard0 = stats.states_pruned_hard,
                      soft0 = stats.states_pruned_soft, sampled0 = stats.states_sampled_out,
                      costed0 = stats.states_costed;
        auto t0 = Clock::now();
        double featurize_before = stats.seconds_featurize, cost_before = stats.seconds_cost;
        children.clear();
        fresh.clear();
        for (const State &s : beam) {
            if (expanded) (*expanded)[structural_hash(*s.d, index)]++;
            size_t before = children.size();
            expand(s, id);
            for (size_t i = before; i < children.size(); i++)
                if (children[i].features == s.features) rank(children[i]); // passed through
            // Bounded memory on large pipelines: cost what is pending
            // every few thousand states and keep only the candidates that
            // can still be selected.
            if (fresh.size() >= kChunk) {
                cost_pending();
                trim(beam_size);
            }
        }
        stats.seconds_enumerate += seconds_since(t0) - (stats.seconds_featurize - featurize_before) -
                                   (stats.seconds_cost - cost_before);
        if (children.empty()) {
            // Every candidate was pruned (not expected: the untiled root
            // location always passes); this pass has no complete state.
            return {};
        }
        cost_pending();
        std::vector<size_t> order(children.size());
        for (size_t i = 0; i < order.size(); i++)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return children[a].ranked_cost < children[b].ranked_cost;
        });
        std::vector<State> next;
        for (size_t q = 0; q < order.size() && static_cast<int>(next.size()) < beam_size; q++) {
            bool last_chance = q + 1 == order.size() && next.empty();
            if (config.dropout > 0 && !last_chance && uniform01(rng) < config.dropout) continue;
            next.push_back(std::move(children[order[q]]));
        }
        for (State &s : next)
            materialize(s);
        featurize_priced(next);
        beam = std::move(next);
        StepCounts c;
        c.pass = prepass ? -1 : index;
        c.step = step;
        c.func = dag.nodes[id.node].func.name();
        c.phase = id.phase;
        c.enumerated = stats.states_enumerated - enumerated0;
        c.pruned_hard = stats.states_pruned_hard - hard0;
        c.pruned_soft = stats.states_pruned_soft - soft0;
        c.sampled_out = stats.states_sampled_out - sampled0;
        c.costed = stats.states_costed - costed0;
        c.kept = static_cast<int64_t>(beam.size());
        stats.steps.push_back(std::move(c));
    }
    return beam;
}

} // namespace detail

namespace {

const State *cheapest(const std::vector<State> &beam) {
    const State *best = nullptr;
    for (const State &s : beam)
        if (!best || s.cost < best->cost) best = &s;
    return best;
}

// Sec. 3.2: keep unfrozen the ceil(log2 N) Funcs of the pre-pass's best state
// with the highest predicted cost (their stages' costs summed, an inlined
// Func's own row included) and freeze the decisions of the others. N is every
// Func of the pipeline, as in the paper ("all but log2(N) stages"); the kept
// ones are chosen among the Funcs with any choice (always-inlined ones have
// none). Counting only the Funcs with a choice in N (as before) froze one
// Func too many on small pipelines: on bilateral_grid it froze blurz at
// root, ruling out the fusion into blurx that the unfrozen search finds
// (predicted 0.8595 vs 0.7997 with freezing off).
Frozen choose_frozen(const FunctionDAG &dag, const State &pre) {
    std::vector<int> node_of_stage;
    for (size_t n = 0; n < dag.nodes.size(); n++)
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++)
            node_of_stage.push_back(static_cast<int>(n));
    std::vector<double> cost(dag.nodes.size(), 0);
    if (pre.features && pre.stage_costs) {
        for (size_t i = 0; i < pre.features->stage_ids.size() && i < pre.stage_costs->size(); i++)
            cost[node_of_stage.at(pre.features->stage_ids[i])] += (*pre.stage_costs)[i];
    }
    std::vector<int> choice;
    for (size_t n = 0; n < dag.nodes.size(); n++)
        if (!dag.nodes[n].always_inline) choice.push_back(static_cast<int>(n));
    const double n_funcs = static_cast<double>(dag.nodes.size());
    size_t keep = std::min(choice.size(),
                           n_funcs <= 1 ? size_t(1) : static_cast<size_t>(std::ceil(std::log2(n_funcs))));
    std::stable_sort(choice.begin(), choice.end(), [&](int a, int b) { return cost[a] > cost[b]; });
    Frozen frozen(dag.nodes.size());
    for (size_t q = keep; q < choice.size(); q++)
        frozen[choice[q]] = pre.d->funcs[choice[q]];
    return frozen;
}

} // namespace

std::vector<PipelineFeatures> pipeline_features(const FunctionDAG &dag) {
    std::vector<PipelineFeatures> v;
    for (const Node &n : dag.nodes)
        for (const Stage &s : n.stages)
            v.push_back(s.features);
    return v;
}

SearchResult evaluate_decisions(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                                const Decisions &d) {
    SearchResult r;
    r.decisions = d;
    LoopNest nest(dag, d);
    r.features = featurize(nest, gpu);
    std::vector<double> costs;
    std::vector<std::vector<double>> per_stage;
    model.evaluate({&r.features}, costs, &per_stage);
    r.cost = costs.at(0);
    r.stage_ids = r.features.stage_ids;
    r.stage_costs = per_stage.at(0);
    return r;
}

double process_cpu_seconds() {
    return cpu_now();
}

SearchResult beam_search(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                         const SearchConfig &config) {
    auto t_start = Clock::now();
    double cpu_start = cpu_now();
    SearchResult r;
    SearchStats stats;
    std::mt19937_64 rng(config.seed);
    const int passes = std::max(1, config.passes);
    FeatureMemo memo(config.memo_max_bytes);
    FeatureMemo *memo_ptr = config.memoize ? &memo : nullptr;
    RegionMemo regions;
    RootTilingCache root_tilings;
    std::vector<State> start(1);
    start[0].d = std::make_shared<const Decisions>(initial_decisions(dag));

    Frozen frozen;
    const bool freeze =
        config.freezing && dag.nodes.size() >= static_cast<size_t>(std::max(0, config.freezing_min_funcs));
    if (freeze) {
        auto tp = Clock::now();
        Pass pre{dag,     model, gpu, config,  rng,     stats, memo_ptr, &regions, &root_tilings,
                 nullptr, true,  0,   nullptr, nullptr, {},    {},       {},       {}};
        std::vector<State> beam = pre.run(start);
        if (const State *best = cheapest(beam)) {
            frozen = choose_frozen(dag, *best);
            r.prepass_decisions = *best->d;
        }
        stats.seconds_prepass = seconds_since(tp);
    }
    r.frozen.assign(freeze ? dag.nodes.size() : 0, false);
    for (size_t n = 0; n < frozen.size(); n++) {
        r.frozen[n] = frozen[n].has_value();
        stats.funcs_frozen += frozen[n].has_value() ? 1 : 0;
    }

    std::map<uint64_t, int> expanded_in_earlier_passes; // structural hash -> times
    bool have_best = false;
    State best;
    for (int pass = 0; pass < passes; pass++) {
        std::map<uint64_t, int> expanded_this_pass;
        Pass p{dag,
               model,
               gpu,
               config,
               rng,
               stats,
               memo_ptr,
               &regions,
               &root_tilings,
               frozen.empty() ? nullptr : &frozen,
               false,
               pass,
               &expanded_in_earlier_passes,
               &expanded_this_pass,
               {},
               {},
               {},
               {}};
        std::vector<State> beam = p.run(start);
        for (auto &kv : expanded_this_pass)
            expanded_in_earlier_passes[kv.first] += kv.second;
        for (State &s : beam) {
            if (!have_best || s.cost < best.cost) {
                best = s;
                have_best = true;
            }
        }
    }
    if (!have_best) throw std::runtime_error("the search found no schedule within the pruning limits");
    r.decisions = *best.d;
    r.cost = best.cost;
    if (best.features) {
        r.features = *best.features;
        r.stage_ids = best.features->stage_ids;
    }
    if (best.stage_costs) r.stage_costs = *best.stage_costs;
    stats.memo_hits = memo.hits;
    stats.memo_misses = memo.misses;
    stats.memo_evictions = memo.evictions;
    stats.region_memo_hits = regions.hits;
    stats.region_memo_misses = regions.misses;
    stats.region_memo_resets = regions.resets;
    stats.seconds_total = seconds_since(t_start);
    stats.cpu_seconds_total = cpu_now() - cpu_start;
    r.stats = stats;
    return r;
}

} // namespace gpusched
