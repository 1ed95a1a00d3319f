// sampling_buckets: the sampled search groups a root tiling step's options
// once per search instead of hashing every option of every parent. The
// groups must be the ones the structural hash makes under any parent: the
// same buckets, in the same order, with the same members, at every depth.

#include "test/catch2_compat.h"

#include <map>
#include <random>

#include <Halide.h>

#include "core/sampling_buckets.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/pipelines.h"
#include "test/search/root_tiling_decision.h"

using namespace gpusched;
using gpusched::test::h100;

namespace {

// The buckets as the search made them for every parent before: each option
// written into the parent's decision, grouped by the whole decision's
// structural hash, buckets in the order of their first option.
std::vector<std::vector<size_t>> hashed_buckets(const Decisions &parent, int n, int si,
                                                const RootTilingOptions &options, int depth) {
    Decisions d = parent;
    std::map<uint64_t, size_t> bucket_of;
    std::vector<std::vector<size_t>> buckets;
    for (size_t i = 0; i < options.size(); i++) {
        options.apply(i, d.funcs[n].stages[si]);
        auto [it, fresh] = bucket_of.emplace(structural_hash(d, depth), buckets.size());
        if (fresh) buckets.emplace_back();
        buckets[it->second].push_back(i);
    }
    return buckets;
}

struct Compared {
    size_t steps = 0, options = 0, split = 0; // split: steps with more than one bucket at depth 3
};

// At each root tiling step of random walks, the precomputed buckets against
// the hashed ones, at every depth the search may use (sampling_max_depth).
template <typename P, typename... Args> Compared compare_along_walks(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(29);
    Compared compared;
    for (int w = 0; w < walks; w++) {
        Decisions d = initial_decisions(dag);
        for (int step = 0; step < num_steps(dag); step++) {
            const StepId id = step_at(dag, step);
            if (is_root_tiling_step(dag, d, id)) {
                const int n = id.node, si = id.phase - 1;
                Decisions parent = d;
                test::size_for_root_tiling(dag, parent.funcs[n], static_cast<size_t>(n));
                const RootTilingOptions options = root_tiling_options(dag, n, si, h100());
                for (int depth = 1; depth <= 6; depth++) {
                    INFO("Func " << dag.nodes[n].func.name() << " stage " << si << " depth " << depth);
                    const SamplingBuckets b = sampling_buckets(options, depth);
                    const std::vector<std::vector<size_t>> want =
                        hashed_buckets(parent, n, si, options, depth);
                    REQUIRE(b.count() == want.size());
                    for (size_t g = 0; g < want.size(); g++) {
                        const std::vector<size_t> got(
                            b.members.begin() + static_cast<std::ptrdiff_t>(b.starts[g]),
                            b.members.begin() + static_cast<std::ptrdiff_t>(b.starts[g + 1]));
                        CHECK(got == want[g]);
                    }
                    if (depth == 3 && want.size() > 1) compared.split++;
                }
                compared.steps++;
                compared.options += options.size();
            }
            std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            d = kids[std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng)];
        }
    }
    return compared;
}

} // namespace

TEST_CASE("a root tiling step's sampling buckets, made once per search, are the buckets the structural hash "
          "makes under each parent",
          "[search][sampling]") {
    const Compared blur = compare_along_walks<test_pipelines::Blur>(3);
    const Compared reductions = compare_along_walks<test_pipelines::Reductions>(3);
    const Compared staged = compare_along_walks<test_pipelines::Staged>(3, false);
    const Compared diamond = compare_along_walks<test_pipelines::DiamondChain>(2, 4, 64);
    for (const Compared &c : {blur, reductions, staged, diamond}) {
        INFO(c.steps << " root tiling steps, " << c.options << " options");
        CHECK(c.steps > 0);
        // Buckets that split the options, not only the depths that put
        // them all in one.
        CHECK(c.split > 0);
    }
}
