// Featurization on small loop nests whose features were worked out by hand.
#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "core/featurize_schedule.h"
#include "core/memory_transactions.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/pipelines.h"

using namespace gpusched;
using SF = ScheduleFeature;

namespace {

using gpusched::test::h100;

// Every Func inlined except those given.
Decisions all_inline(const FunctionDAG &dag) {
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    for (auto &f : d.funcs)
        f.location = ComputeLocation::Inline;
    return d;
}

FuncDecision root(std::vector<int64_t> thread, std::vector<int64_t> serial) {
    FuncDecision f;
    f.location = ComputeLocation::Root;
    f.tiled = true;
    f.stages.push_back(StageTiling{serial, thread});
    return f;
}

ScheduleFeatures features_of(const LoopNest &nest, int node) {
    return featurize_stage(nest, nest.stage_at[node][0], h100());
}

} // namespace

TEST_CASE("a warp reading a row of floats is coalesced: 4 sectors per warp", "[featurize]") {
    test_pipelines::Copy p(false);
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    d.funcs[0] = root({32, 1}, {1, 1});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::num_blocks] == 8 * 256);
    CHECK(f[SF::num_threads_per_block] == 32);
    CHECK(f[SF::num_global_mem_loads_per_block] == 4);
    CHECK(f[SF::global_mem_load_efficiency] == Approx(1.0));
    CHECK(f[SF::num_global_mem_stores_per_block] == 4);
    CHECK(f[SF::global_mem_store_efficiency] == Approx(1.0));
    CHECK(f[SF::warp_lane_utilization] == Approx(1.0));
}

TEST_CASE("a warp reading a column is uncoalesced: one sector per lane", "[featurize]") {
    test_pipelines::Copy p(true);
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    d.funcs[0] = root({32, 1}, {1, 1});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::num_global_mem_loads_per_block] == 32);
    CHECK(f[SF::global_mem_load_efficiency] == Approx(4.0 / 32.0));
    CHECK(f[SF::num_global_mem_stores_per_block] == 4); // the store stays coalesced
}

TEST_CASE("a serial loop the load depends on multiplies its sectors", "[featurize]") {
    test_pipelines::Copy p(false);
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    // Each thread does 2 consecutive x: a warp covers 64 floats = 8 sectors
    // per serial step, 2 steps, each at 50% sector efficiency.
    d.funcs[0] = root({32, 1}, {2, 1});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::points_computed_per_thread] == 2);
    CHECK(f[SF::num_global_mem_loads_per_block] == 16);
    CHECK(f[SF::global_mem_load_efficiency] == Approx(0.5));
    CHECK(f[SF::unrolled_loop_extent] == 2);
}

TEST_CASE("a row picked by a square root and a shift is read coalesced, as max_filter's vert",
          "[featurize]") {
    // 16 x 16 threads over (x, y), the 27 t serial in each thread, as the
    // naive schedule runs max_filter's vert. A warp is 2 rows of 16 floats
    // (64-byte aligned: 2 sectors each) at every t: 4 sectors, 8 warps a
    // block, 27 points. Counted as unknown, each lane would be its own
    // sector: 32 a warp, efficiency 1/8.
    test_pipelines::LevelColumn p;
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    d.funcs[0] = root({16, 16, 1}, {1, 1, 27});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::num_threads_per_block] == 256);
    CHECK(f[SF::num_global_mem_loads_per_block] == 4 * 8 * 27);
    CHECK(f[SF::global_mem_load_efficiency] == Approx(1.0));
}

TEST_CASE("a serial loop the load does not depend on reuses its sectors", "[featurize]") {
    // out(x, y) = in(x): every y of a thread reads the same float.
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 1, "row_in"};
    Halide::Func out{"rows_out"};
    out(x, y) = in(x);
    in.dim(0).set_estimate(0, 256);
    out.set_estimate(x, 0, 256).set_estimate(y, 0, 256);
    FunctionDAG dag(test_pipelines::functions({out}));
    Decisions d = all_inline(dag);
    // Each thread does 2 consecutive y: the load is issued once (a warp's
    // 32 floats, 4 sectors), the store twice (8 sectors).
    d.funcs[0] = root({32, 1}, {1, 2});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::points_computed_per_thread] == 2);
    CHECK(f[SF::num_global_mem_loads_per_block] == 4);
    CHECK(f[SF::global_mem_load_efficiency] == Approx(1.0));
    CHECK(f[SF::num_global_mem_stores_per_block] == 8);
}

TEST_CASE("a tail warp is counted with its own lanes", "[featurize]") {
    test_pipelines::Copy p(false, 240, 16);
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    d.funcs[0] = root({48, 1}, {1, 1});
    LoopNest nest(dag, d);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::num_warps_per_block] == 2);
    CHECK(f[SF::num_active_warps_per_block] == 2);
    CHECK(f[SF::warp_lane_utilization] == Approx(48.0 / 64.0));
    CHECK(f[SF::idle_lane_wastage] == Approx(16.0 / 1024.0));
    // Regular warp: 32 floats = 4 sectors; tail: 16 floats = 2 sectors.
    CHECK(f[SF::num_global_mem_loads_per_block] == 6);
    CHECK(f[SF::num_blocks] == 5 * 16);
}

TEST_CASE("occupancy is limited by threads per block or by blocks per SM", "[featurize]") {
    test_pipelines::Copy p(false);
    FunctionDAG dag(p.outputs());
    Decisions d = all_inline(dag);
    SECTION("1024 threads: 2 blocks per SM (2048 threads)") {
        d.funcs[0] = root({32, 32}, {1, 1});
        LoopNest nest(dag, d);
        ScheduleFeatures f = features_of(nest, 0);
        CHECK(f[SF::block_occupancy] == Approx(1.0));
        CHECK(f[SF::max_block_occupancy] == Approx(2.0 / 32.0));
        CHECK(f[SF::max_warp_occupancy] == Approx(1.0));
    }
    SECTION("32 threads: 32 blocks per SM, half the warps") {
        d.funcs[0] = root({32, 1}, {1, 1});
        LoopNest nest(dag, d);
        ScheduleFeatures f = features_of(nest, 0);
        CHECK(f[SF::max_block_occupancy] == Approx(1.0));
        CHECK(f[SF::max_warp_occupancy] == Approx(0.5));
        CHECK(f[SF::shared_mem_block_limit_factor] == Approx(1.0));
    }
}

TEST_CASE("shared memory: pointwise reads are conflict-free, transposed reads conflict", "[featurize]") {
    for (bool transpose : {false, true}) {
        test_pipelines::Staged p(transpose);
        FunctionDAG dag(p.outputs());
        int pn = dag.node_index(p.p.name());
        Decisions d = all_inline(dag);
        d.funcs[0] = root({32, 8}, {1, 1});
        d.funcs[pn].location = ComputeLocation::Block;
        d.funcs[pn].host = 0;
        d.funcs[pn].stages.push_back(StageTiling{{1, 1}, {}});
        LoopNest nest(dag, d);
        REQUIRE(nest.kernels.size() == 1);
        // 32x8 floats of p per block (8x32 when transposed).
        CHECK(nest.kernels[0].shared_bytes == 32 * 8 * 4);
        ScheduleFeatures f = features_of(nest, 0);
        // out is one realization (compute_root): it reads all of p, 4 bytes per thread.
        CHECK(f[SF::unique_shared_bytes_read_per_realization] == 256 * 256 * 4);
        CHECK(f[SF::unique_shared_bytes_read_per_thread] == 4);
        CHECK(f[SF::unique_bytes_read_per_task] == 32 * 8 * 4);
        CHECK(f[SF::unique_global_bytes_read_per_realization] == 0);
        if (!transpose) {
            // 8 full warps, one conflict-free transaction each.
            CHECK(f[SF::num_shared_mem_loads_per_block] == 8);
            CHECK(f[SF::shared_mem_load_efficiency] == Approx(1.0));
        } else {
            // p is stored 8 wide: lane x reads word 8x, 4 banks, 8-way conflict.
            CHECK(f[SF::num_shared_mem_loads_per_block] == 8 * 8);
            CHECK(f[SF::shared_mem_load_efficiency] == Approx(1.0 / 8.0));
        }
        ScheduleFeatures fp = features_of(nest, pn);
        CHECK(fp[SF::num_realizations] == 8 * 32);
        CHECK(fp[SF::shared_bytes_at_task] == 32 * 8 * 4);
        CHECK(fp[SF::num_global_mem_loads_per_block] > 0);
    }
}

TEST_CASE("shared memory per block limits resident blocks", "[featurize]") {
    test_pipelines::Staged p(false);
    FunctionDAG dag(p.outputs());
    int pn = dag.node_index(p.p.name());
    Decisions d = all_inline(dag);
    // A 64x64 tile of p per block: 16 KiB, 14 blocks fit in 228 KiB.
    d.funcs[0] = root({16, 16}, {4, 4});
    d.funcs[pn].location = ComputeLocation::Block;
    d.funcs[pn].host = 0;
    d.funcs[pn].stages.push_back(StageTiling{{4, 4}, {}});
    LoopNest nest(dag, d);
    CHECK(nest.kernels[0].shared_bytes == 64 * 64 * 4);
    ScheduleFeatures f = features_of(nest, 0);
    CHECK(f[SF::shared_mem_block_limit_factor] == Approx(14.0 / 32.0));
    CHECK(f[SF::max_block_occupancy] == Approx(8.0 / 32.0)); // 256 threads: 8 blocks by threads
    CHECK(f[SF::shared_mem_occupancy] == Approx(16.0 / 228.0));
}

TEST_CASE("an inlined Func gets its own row counting every call and its consumer row stays a computed stage",
          "[featurize]") {
    // out(x, y) calls blur_x three times per point, and each blur_x call
    // reads the input (through its wrapper Func blur_in_im) three times; with
    // both inlined and out computed at root over 256x128, blur_x is called
    // 3 * 256 * 128 times and blur_in_im 9 * 256 * 128 times.
    test_pipelines::Blur p(256, 128);
    FunctionDAG dag(p.outputs());
    // Halide makes Func names unique per process ("blur_out$2" once another
    // test built a Blur), so match the name up to that suffix.
    std::map<std::string, int> node;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const std::string &name = dag.nodes[n].name;
        node[name.substr(0, name.find('$'))] = static_cast<int>(n);
    }
    REQUIRE(node.count("blur_out"));
    REQUIRE(node.count("blur_x"));
    REQUIRE(node.count("blur_in_im"));
    Decisions d = all_inline(dag);
    d.funcs[node["blur_out"]] = root({32, 8}, {1, 1});
    LoopNest nest(dag, d);
    StateFeatures s = featurize(nest, h100());
    std::map<int, double> calls, points;
    for (size_t i = 0; i < s.stage_ids.size(); i++) {
        calls[s.stage_ids[i]] = s.schedule[i][SF::inlined_calls];
        points[s.stage_ids[i]] = s.schedule[i][SF::points_computed_total];
    }
    REQUIRE(s.stage_ids.size() == 3);
    const double pts = 256.0 * 128.0;
    CHECK(calls[dag.stage_id(node["blur_out"], 0)] == 0);
    CHECK(points[dag.stage_id(node["blur_out"], 0)] == Approx(pts));
    CHECK(calls[dag.stage_id(node["blur_x"], 0)] == Approx(3 * pts));
    CHECK(calls[dag.stage_id(node["blur_in_im"], 0)] == Approx(9 * pts));

    SECTION("computed at root instead, blur_x has a computed row and only the input wrapper is inlined") {
        d.funcs[node["blur_x"]] = root({32, 8}, {1, 1});
        LoopNest nest2(dag, d);
        StateFeatures s2 = featurize(nest2, h100());
        REQUIRE(s2.stage_ids.size() == 3);
        std::map<int, const ScheduleFeatures *> row;
        for (size_t i = 0; i < s2.stage_ids.size(); i++)
            row[s2.stage_ids[i]] = &s2.schedule[i];
        const ScheduleFeatures &bx = *row.at(dag.stage_id(node["blur_x"], 0));
        CHECK(bx[SF::inlined_calls] == 0);
        CHECK(bx[SF::points_computed_total] == Approx(256.0 * 130.0)); // y - 1 .. y + 1
        CHECK((*row.at(dag.stage_id(node["blur_out"], 0)))[SF::inlined_calls] == 0);
        CHECK((*row.at(dag.stage_id(node["blur_in_im"], 0)))[SF::inlined_calls] == Approx(3 * 256.0 * 130.0));
    }
}

TEST_CASE("a diamond of inlined Funcs is featurized Func by Func: 2^40 paths counted exactly and the "
          "footprint is the union",
          "[featurize]") {
    // Level k is called 2^(40-k) times per output point, and so is the
    // input's wrapper below level 0 (2^40); the input is read over
    // x - 40 .. x + 40.
    // Walking the paths one by one would take 2^40 steps.
    const int depth = 40, w = 1024;
    test_pipelines::DiamondChain p(depth, w);
    FunctionDAG dag(p.outputs());
    int out = -1;
    std::map<int, int> level_of; // node -> k
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const std::string name = dag.nodes[n].name.substr(0, dag.nodes[n].name.find('$'));
        if (name == "diamond_out")
            out = static_cast<int>(n);
        else if (name == "dmd_in_im")
            level_of[static_cast<int>(n)] = -1; // the input's wrapper, below level 0
        else if (name.rfind("diamond_", 0) == 0)
            level_of[static_cast<int>(n)] = std::stoi(name.substr(8));
        else
            FAIL("unexpected Func " << name);
    }
    REQUIRE(out >= 0);
    REQUIRE(level_of.size() == depth + 2);
    Decisions d = all_inline(dag);
    d.funcs[out] = root({32}, {1});
    LoopNest nest(dag, d);
    StateFeatures s = featurize(nest, h100());
    REQUIRE(s.stage_ids.size() == depth + 3);
    for (size_t i = 0; i < s.stage_ids.size(); i++) {
        const ScheduleFeatures &row = s.schedule[i];
        if (s.stage_ids[i] == dag.stage_id(out, 0)) {
            CHECK(row[SF::inlined_calls] == 0);
            CHECK(row[SF::unique_bytes_read_per_realization] == Approx(4.0 * (w + 2 * depth)));
            CHECK(row[SF::unique_global_bytes_read_per_realization] == Approx(4.0 * (w + 2 * depth)));
            continue;
        }
        int node = -1;
        for (const auto &[n, k] : level_of)
            if (dag.stage_id(n, 0) == s.stage_ids[i]) node = n;
        REQUIRE(node >= 0);
        const int k = std::max(0, level_of[node]);
        CHECK(row[SF::inlined_calls] == Approx(std::ldexp(1.0, depth - k) * w));
    }
}

// The transaction analysis counts one serial point per residue of its
// offset (access_transactions): that is exact only if moving every lane by
// whole sectors (global) or words (shared) leaves the count unchanged. A
// warp's addresses in several patterns, moved by many offsets, against the
// count at each offset's residue.
TEST_CASE("a warp's transactions depend only on its offset modulo a sector or a word", "[featurize]") {
    detail::TransactionBuffers buffers;
    const std::vector<std::vector<int64_t>> patterns = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},  // a row
        {0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104}, // every 8th: bank conflicts
        {7, 3, 100, 3, -5, 64, 65, -40, 12, 1000, 999, 31, 33},  // scattered, repeated, negative
        {0, 0, 0, 0},                                            // a broadcast
    };
    for (int bytes : {1, 2, 4, 8}) {
        for (const auto &pattern : patterns) {
            for (int64_t offset : {-1000, -33, -8, -1, 1, 3, 5, 8, 31, 32, 64, 77, 4096}) {
                std::vector<int64_t> moved = pattern, at_residue = pattern;
                for (size_t i = 0; i < pattern.size(); i++) {
                    moved[i] += offset;
                    // The smallest non-negative offset with the same residue
                    // in bytes modulo 32 (so also modulo 4); every element
                    // size divides 32, so it is a whole number of elements.
                    at_residue[i] += ((offset * bytes) & 31) / bytes;
                }
                CAPTURE(bytes, offset, pattern);
                CHECK(detail::global_transactions(moved, bytes, buffers) ==
                      detail::global_transactions(at_residue, bytes, buffers));
                CHECK(detail::shared_transactions(moved, bytes, 32, buffers) ==
                      detail::shared_transactions(at_residue, bytes, 32, buffers));
            }
        }
    }
    // And the counts themselves on the patterns above (4-byte elements).
    CHECK(detail::global_transactions(patterns[0], 4, buffers) == 2); // 64 bytes: 2 sectors
    CHECK(detail::shared_transactions(patterns[0], 4, 32, buffers) == 1);
    // Words 0, 8, ..., 104 fall in banks 0, 8, 16 and 24: 4, 4, 3 and 3 of them.
    CHECK(detail::shared_transactions(patterns[1], 4, 32, buffers) == 4);
    CHECK(detail::shared_transactions(patterns[3], 4, 32, buffers) == 1); // one word, broadcast
}

// Every stage's row of every candidate along random walks of three
// pipelines, featurized on this thread after the same state was featurized
// once (so every warp's transaction count is found in this thread's memo,
// along with those of earlier states) and on a new thread (an empty memo,
// every count computed).
TEST_CASE("a stage's row is the same whether its warps' transaction counts are remembered or counted afresh",
          "[featurize]") {
    size_t rows = 0;
    auto check_state = [&](const FunctionDAG &dag, const Decisions &d) {
        LoopNest nest(dag, d);
        std::vector<ScheduleFeatures> remembered, afresh;
        for (size_t i = 0; i < nest.stages.size(); i++)
            featurize_stage(nest, static_cast<int>(i), h100());
        for (size_t i = 0; i < nest.stages.size(); i++)
            remembered.push_back(featurize_stage(nest, static_cast<int>(i), h100()));
        std::thread([&] {
            for (size_t i = 0; i < nest.stages.size(); i++)
                afresh.push_back(featurize_stage(nest, static_cast<int>(i), h100()));
        }).join();
        for (size_t i = 0; i < nest.stages.size(); i++) {
            INFO("stage " << i << " of " << dag.nodes[nest.stages[i].node].func.name());
            for (int f = 0; f < kNumScheduleFeatures; f++) {
                INFO("feature " << f);
                CHECK(remembered[i].values[f] == afresh[i].values[f]);
            }
            rows++;
        }
    };
    auto walk = [&](const FunctionDAG &dag, unsigned seed) {
        std::mt19937 rng(seed);
        Decisions d = initial_decisions(dag);
        for (int step = 0; step < num_steps(dag); step++) {
            std::vector<Decisions> kids =
                enumerate_children(dag, d, step_at(dag, step), h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            for (const Decisions &kid : kids)
                check_state(dag, kid);
            d = kids[std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng)];
        }
    };
    test_pipelines::Blur blur;
    test_pipelines::Reductions reductions;
    test_pipelines::DiamondChain chain(4, 64);
    for (unsigned seed : {1u, 2u}) {
        walk(FunctionDAG(blur.outputs()), seed);
        walk(FunctionDAG(reductions.outputs()), seed);
        walk(FunctionDAG(chain.outputs()), seed);
    }
    CHECK(rows > 500);
}
