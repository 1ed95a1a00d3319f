// LoopNest::retile_root_stage and featurize_retiled: the search retiles one
// root stage in place between the candidates of a root tiling step instead
// of building the whole nest, and featurizes only its kernel; and
// LoopNest::rebuild_adding: a location step's candidates are made from
// their parent's nest. Each nest made so must be the nest a full build gives
// (every stage, kernel, loop and region), and a retiled one's features those
// a whole featurization gives.

#include "test/catch2_compat.h"

#include <random>

#include <Halide.h>

#include "core/featurize_schedule.h"
#include "core/loop_nest.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/pipelines.h"
#include "test/search/root_tiling_decision.h"

using namespace gpusched;
using gpusched::test::h100;

namespace {

// Everything a nest holds, compared with a fresh build of the same decisions.
void check_same_nest(const LoopNest &a, const FunctionDAG &dag, const Decisions &d) {
    const LoopNest b(dag, d);
    REQUIRE(a.stages.size() == b.stages.size());
    for (size_t i = 0; i < a.stages.size(); i++) {
        const ScheduledStage &x = a.stages[i], &y = b.stages[i];
        INFO("stage " << i << " (Func " << dag.nodes[x.node].func.name() << ", stage " << x.stage << ")");
        CHECK(x.node == y.node);
        CHECK(x.stage == y.stage);
        CHECK(x.location == y.location);
        CHECK(x.kernel == y.kernel);
        CHECK(x.serial == y.serial);
        CHECK(x.thread == y.thread);
        CHECK(x.block == y.block);
        CHECK(x.loops_realization == y.loops_realization);
        CHECK(x.loops_block == y.loops_block);
        CHECK(x.loops_thread == y.loops_thread);
        CHECK(x.num_realizations == y.num_realizations);
        CHECK(x.threads == y.threads);
        CHECK(x.thread_shape == y.thread_shape);
        CHECK(x.thread_slot == y.thread_slot);
    }
    REQUIRE(a.kernels.size() == b.kernels.size());
    for (size_t k = 0; k < a.kernels.size(); k++) {
        const Kernel &x = a.kernels[k], &y = b.kernels[k];
        INFO("kernel " << k);
        CHECK(x.node == y.node);
        CHECK(x.stage == y.stage);
        CHECK(x.num_blocks == y.num_blocks);
        CHECK(x.block_shape == y.block_shape);
        CHECK(x.threads_per_block == y.threads_per_block);
        CHECK(x.shared_bytes == y.shared_bytes);
        CHECK(x.widest_shared_element == y.widest_shared_element);
        CHECK(x.stages == y.stages);
    }
    REQUIRE(a.loops().size() == b.loops().size());
    for (size_t l = 0; l < a.loops().size(); l++) {
        const LoopNode &x = a.loops()[l], &y = b.loops()[l];
        INFO("loop " << l);
        CHECK(x.kind == y.kind);
        CHECK(x.node == y.node);
        CHECK(x.stage == y.stage);
        CHECK(x.extent == y.extent);
        CHECK(x.parent == y.parent);
        CHECK(x.children == y.children);
        CHECK(x.stored == y.stored);
    }
    CHECK(a.stage_at == b.stage_at);
    CHECK(a.realization_region == b.realization_region);
    CHECK(a.block_region == b.block_region);
    CHECK(a.realizations == b.realizations);
    const StateFeatures fa = featurize(a, h100()), fb = featurize(b, h100());
    REQUIRE(fa.schedule.size() == fb.schedule.size());
    for (size_t r = 0; r < fa.schedule.size(); r++)
        CHECK(fa.schedule[r].values == fb.schedule[r].values);
}

// Root tiling options checked, and how many of them were retiled in place.
struct Checked {
    size_t options = 0, in_place = 0;
};

// For each root stage of d (whatever is fused into its kernel), every
// option of its root tiling written into d one after another, the nest
// retiled after each and checked against a full build.
void retile_every_root_stage(const FunctionDAG &dag, Decisions d, Checked &checked) {
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (d.funcs[n].location != ComputeLocation::Root) continue;
        for (size_t si = 0; si < dag.nodes[n].stages.size(); si++) {
            const StepId step{static_cast<int>(n), static_cast<int>(si) + 1};
            if (!is_root_tiling_step(dag, d, step)) continue;
            test::size_for_root_tiling(dag, d.funcs[n], n);
            const RootTilingOptions options =
                root_tiling_options(dag, static_cast<int>(n), static_cast<int>(si), h100());
            LoopNest nest(dag, d);
            // The search's featurization of each option, from the one before
            // (with a memo, as the search does, and without).
            FeatureMemo memo;
            StateFeatures before = featurize(nest, h100(), &memo),
                          before_unmemoized = featurize(nest, h100());
            // Every option at most 40 apart, so a stage with hundreds of
            // options is sampled across its whole list.
            const size_t stride = std::max<size_t>(1, options.size() / 40);
            for (size_t i = 0; i < options.size(); i += stride) {
                options.apply(i, d.funcs[n].stages[si]);
                const bool in_place = nest.retile_root_stage(static_cast<int>(n), static_cast<int>(si));
                INFO("Func " << dag.nodes[n].func.name() << " stage " << si << " option " << i);
                check_same_nest(nest, dag, d);
                if (in_place) {
                    checked.in_place++;
                    const int stage = nest.stage_at[n][si];
                    StateFeatures memoized = featurize_retiled(nest, h100(), &memo, before, stage);
                    StateFeatures unmemoized =
                        featurize_retiled(nest, h100(), nullptr, before_unmemoized, stage);
                    FeatureMemo fresh_memo;
                    const StateFeatures whole = featurize(nest, h100(), &fresh_memo);
                    for (const StateFeatures *f : {&memoized, &unmemoized}) {
                        CHECK(f->stage_ids == whole.stage_ids);
                        REQUIRE(f->schedule.size() == whole.schedule.size());
                        for (size_t r = 0; r < whole.schedule.size(); r++)
                            CHECK(f->schedule[r].values == whole.schedule[r].values);
                    }
                    REQUIRE(memoized.row_hashes.size() == whole.row_hashes.size());
                    for (size_t r = 0; r < whole.row_hashes.size(); r++) {
                        CHECK(memoized.row_hashes[r].a == whole.row_hashes[r].a);
                        CHECK(memoized.row_hashes[r].b == whole.row_hashes[r].b);
                    }
                    CHECK(unmemoized.row_hashes.empty());
                    before = std::move(memoized);
                    before_unmemoized = std::move(unmemoized);
                } else {
                    before = featurize(nest, h100(), &memo);
                    before_unmemoized = featurize(nest, h100());
                }
                checked.options++;
            }
        }
    }
}

// Random walks of the search space: at every root tiling step the parent,
// and the finished schedule (Funcs fused into root kernels, where the nest
// must build the whole kernel again), each retiled through its options.
template <typename P, typename... Args> Checked retile_along_walks(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(17);
    Checked checked;
    for (int w = 0; w < walks; w++) {
        Decisions d = initial_decisions(dag);
        for (int step = 0; step < num_steps(dag); step++) {
            const StepId id = step_at(dag, step);
            if (is_root_tiling_step(dag, d, id)) retile_every_root_stage(dag, d, checked);
            std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            // Most Funcs computed below root where they can be, so that
            // finished schedules have kernels with Funcs fused into them.
            std::vector<size_t> low;
            for (size_t i = 0; i < kids.size(); i++)
                if (id.phase == 0 && (kids[i].funcs[id.node].location == ComputeLocation::Block ||
                                      kids[i].funcs[id.node].location == ComputeLocation::Thread))
                    low.push_back(i);
            size_t pick = std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng);
            if (!low.empty() && std::uniform_int_distribution<int>(0, 3)(rng) != 0)
                pick = low[std::uniform_int_distribution<size_t>(0, low.size() - 1)(rng)];
            d = kids[pick];
        }
        retile_every_root_stage(dag, d, checked);
    }
    return checked;
}

// Random walks of the search space: at every location step, the first
// child's nest built whole (keeping the parent's part as the base) and each
// later child's made from the base, each checked against a full build.
// Returns how many were made from the base.
template <typename P, typename... Args> size_t add_along_walks(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(23);
    size_t added = 0;
    for (int w = 0; w < walks; w++) {
        Decisions d = initial_decisions(dag);
        for (int step = 0; step < num_steps(dag); step++) {
            const StepId id = step_at(dag, step);
            std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            if (id.phase == 0) {
                Decisions scratch = d;
                LoopNest nest(dag, scratch);
                for (size_t k = 0; k < kids.size(); k++) {
                    scratch.funcs[id.node] = kids[k].funcs[id.node];
                    INFO("Func " << dag.nodes[id.node].func.name() << " at "
                                 << static_cast<int>(kids[k].funcs[id.node].location));
                    if (k == 0)
                        nest.rebuild_keeping_base(id.node);
                    else if (nest.rebuild_adding(id.node))
                        added++;
                    check_same_nest(nest, dag, scratch);
                }
                // A nest that is not the base's with one Func added (a
                // producer after it already at root) is built whole.
                const size_t next = static_cast<size_t>(id.node) + 1;
                if (next < dag.nodes.size()) {
                    FuncDecision &producer = scratch.funcs[next];
                    producer.location = ComputeLocation::Root;
                    producer.tiled = true;
                    producer.stages.clear();
                    for (const Stage &st : dag.nodes[next].stages)
                        producer.stages.push_back(StageTiling{std::vector<int64_t>(st.loops.size(), 1),
                                                              std::vector<int64_t>(st.loops.size(), 1)});
                    CHECK_FALSE(nest.rebuild_adding(id.node));
                    check_same_nest(nest, dag, scratch);
                }
            }
            size_t pick = std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng);
            d = kids[pick];
        }
    }
    return added;
}

// Random walks of the search space: at every location step, the first
// candidate of each parent a beam could hold there (every option of the
// previous Func's location, each given the first of its tilings), in order
// and back, then of a parent from another walk (sharing fewer Funcs), built
// one after another in one nest, each checked against a full build.
// Returns how many were built.
template <typename P, typename... Args> size_t keep_along_walks(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(31);
    size_t built = 0;
    std::vector<Decisions> other_walk; // the last walk's parent at each step
    for (int w = 0; w < walks; w++) {
        Decisions d = initial_decisions(dag);
        std::vector<Decisions> placed; // the last location step's children
        int placed_at = -1;            // that step
        std::vector<Decisions> this_walk;
        for (int step = 0; step < num_steps(dag); step++) {
            const StepId id = step_at(dag, step);
            this_walk.push_back(d);
            if (id.phase == 0) {
                std::vector<Decisions> parents;
                for (Decisions parent : placed) {
                    for (int t = placed_at + 1; t < step && !parent.funcs.empty(); t++) {
                        std::vector<Decisions> tiled =
                            enumerate_children(dag, parent, step_at(dag, t), h100(), PruningLimits{});
                        parent = tiled.empty() ? Decisions{} : tiled[0];
                    }
                    if (!parent.funcs.empty()) parents.push_back(parent);
                }
                std::vector<Decisions> expanded = parents;
                expanded.insert(expanded.end(), parents.rbegin(), parents.rend());
                if (static_cast<size_t>(step) < other_walk.size()) expanded.push_back(other_walk[step]);
                expanded.push_back(d);
                Decisions scratch = d;
                LoopNest nest(dag, scratch);
                for (const Decisions &parent : expanded) {
                    std::vector<Decisions> kids =
                        enumerate_children(dag, parent, id, h100(), PruningLimits{});
                    if (kids.empty()) continue;
                    scratch = kids[0];
                    INFO("Func " << dag.nodes[id.node].func.name());
                    nest.rebuild_keeping_base(id.node);
                    check_same_nest(nest, dag, scratch);
                    built++;
                }
            }
            std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            if (id.phase == 0) {
                placed = kids;
                placed_at = step;
            }
            d = kids[std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng)];
        }
        other_walk = this_walk;
    }
    return built;
}

} // namespace

TEST_CASE(
    "a parent's first candidate built on from the previous parent's build at the same step is the nest a "
    "full build gives",
    "[search][nest]") {
    CHECK(keep_along_walks<test_pipelines::Reductions>(3) > 0);
    CHECK(keep_along_walks<test_pipelines::Staged>(3, false) > 0);
    CHECK(keep_along_walks<test_pipelines::Blur>(3) > 0);
    CHECK(keep_along_walks<test_pipelines::DiamondChain>(2, 4, 64) > 0);
}

TEST_CASE("a location step's candidate made from its parent's nest is the nest a full build gives",
          "[search][nest]") {
    // The small pipelines' location steps mostly have one candidate each
    // (nothing to make from a base); the blur's and the chain's have more.
    add_along_walks<test_pipelines::Reductions>(3);
    add_along_walks<test_pipelines::Staged>(3, false);
    CHECK(add_along_walks<test_pipelines::Blur>(3) > 0);
    CHECK(add_along_walks<test_pipelines::DiamondChain>(2, 4, 64) > 0);
}

TEST_CASE("a root stage retiled in place is the nest a full build gives, and featurizing only its kernel "
          "gives the whole state's features",
          "[search][nest]") {
    // The walks retile stages in place (a kernel of the stage alone) and
    // build others whole (Funcs fused into the kernel).
    const Checked blur = retile_along_walks<test_pipelines::Blur>(3);
    const Checked reductions = retile_along_walks<test_pipelines::Reductions>(3);
    const Checked staged = retile_along_walks<test_pipelines::Staged>(3, false);
    const Checked diamond = retile_along_walks<test_pipelines::DiamondChain>(2, 4, 64);
    Checked all;
    for (const Checked &c : {blur, reductions, staged, diamond}) {
        INFO(c.in_place << " of " << c.options << " options retiled in place");
        CHECK(c.in_place > 0);
        all.options += c.options;
        all.in_place += c.in_place;
    }
    CHECK(all.in_place < all.options);
}
