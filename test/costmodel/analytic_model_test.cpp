// The analytic GPU model must move the right way when one thing changes.
#include "test/catch2_compat.h"

#include "costmodel/analytic_cost_model.h"
#include "fixtures.h"

using namespace gpusched;
using F = ScheduleFeature;

namespace {

struct Analytic {
    AnalyticGpuCostModel model{test::h100()};
    Analytic() { model.set_pipeline({test::simple_pipeline_stage()}); }
    double cost(const ScheduleFeatures &f) {
        StateFeatures s;
        s.stage_ids = {0};
        s.schedule = {f};
        std::vector<double> c;
        model.evaluate({&s}, c);
        return c[0];
    }
};

} // namespace

TEST_CASE("analytic model: more global load traffic costs more", "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    const double base = a.cost(f);
    f[F::num_global_mem_loads_per_block] *= 4;
    CHECK(a.cost(f) > base);
}

TEST_CASE("analytic model: more global store traffic costs more", "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    const double base = a.cost(f);
    f[F::num_global_mem_stores_per_block] *= 2;
    CHECK(a.cost(f) > base);
}

TEST_CASE("analytic model: more shared-memory wavefronts (bank conflicts) cost more", "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    f[F::num_shared_mem_loads_per_block] = 256;
    const double base = a.cost(f);
    f[F::num_shared_mem_loads_per_block] = 256 * 32;
    CHECK(a.cost(f) > base);
}

TEST_CASE("analytic model: lower warp occupancy is never faster", "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    double previous = 0;
    for (double occ : {1.0, 0.5, 0.25, 0.125, 1.0 / 64}) {
        f[F::max_warp_occupancy] = occ;
        const double c = a.cost(f);
        CHECK(c >= previous);
        previous = c;
    }
    f[F::max_warp_occupancy] = 1.0;
    const double full = a.cost(f);
    f[F::max_warp_occupancy] = 1.0 / 64;
    CHECK(a.cost(f) > full); // one warp per SM cannot hide memory latency
}

TEST_CASE("analytic model: poor warp-lane utilization costs more when compute-bound", "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    PipelineFeatures heavy = test::simple_pipeline_stage();
    heavy.op(OpType::ExternCall, ScalarTypeBucket::Float) = 50; // make it compute-bound
    a.model.set_pipeline({heavy});
    const double full = a.cost(f);
    f[F::warp_lane_utilization] = 0.5;
    CHECK(a.cost(f) > full);
}

TEST_CASE("analytic model: a partial last wave of blocks is charged (tail effect)", "[analytic]") {
    Analytic a;
    const GpuProfile g = test::h100();
    auto f = test::root_kernel_row();
    const double wave = g.sm_count * f[F::max_block_occupancy] * g.max_blocks_per_sm;
    f[F::num_blocks] = wave;
    const auto full = a.model.stage_cost(f, 0);
    f[F::num_blocks] = wave + 1;
    const auto partial = a.model.stage_cost(f, 0);
    CHECK(full.tail_factor == Approx(1.0));
    CHECK(partial.tail_factor > 1.9);
}

namespace {

// root_kernel_row's work (4M points, one load and one store each) done by
// `threads` threads in blocks of up to 256, each thread running its points
// in a serial loop that is not unrolled: the same transactions, fewer threads.
ScheduleFeatures same_work_in_threads(double threads) {
    auto f = test::root_kernel_row();
    const double points = f[F::points_computed_total];
    const double per_block = std::min(threads, 256.0);
    const double blocks = threads / per_block;
    const double total_loads = f[F::num_blocks] * f[F::num_global_mem_loads_per_block];
    const double total_stores = f[F::num_blocks] * f[F::num_global_mem_stores_per_block];
    f[F::num_blocks] = blocks;
    f[F::num_tasks] = blocks;
    f[F::num_threads_per_block] = per_block;
    f[F::points_computed_per_thread] = points / threads;
    f[F::unrolled_loop_extent] = 1;
    f[F::num_global_mem_loads_per_block] = total_loads / blocks;
    f[F::num_global_mem_stores_per_block] = total_stores / blocks;
    return f;
}

} // namespace

TEST_CASE("analytic model: the same work in fewer threads waits on longer serial chains and costs more",
          "[analytic]") {
    Analytic a;
    // From a full GPU down to one thread: every thread's chain of points is
    // longer, and below a wave nothing else hides it.
    double previous = 0;
    for (double threads : {1048576.0, 65536.0, 4096.0, 256.0, 1.0}) {
        const AnalyticStageCost c = a.model.stage_cost(same_work_in_threads(threads), 0);
        CHECK(c.total_ms > previous);
        CHECK(c.kernel_ms >= c.serial_latency_ms);
        previous = c.total_ms;
    }
    // One thread loads 4M values one after another: at least 4M / 4 DRAM or
    // L2 latencies (>= 130 ns), seconds rather than the ~10 us that moving
    // 32 MB takes at full bandwidth.
    const AnalyticStageCost one = a.model.stage_cost(same_work_in_threads(1), 0);
    CHECK(one.serial_latency_ms > 4.0 * 1024 * 1024 / 4 * 130e-6);
    const AnalyticStageCost full = a.model.stage_cost(test::root_kernel_row(), 0);
    CHECK(one.total_ms > 1000 * full.total_ms);
}

TEST_CASE("analytic model: updates of one point spread over threads wait for each other at its address",
          "[analytic]") {
    Analytic a; // the stage stores floats
    // An atomic combining update: `threads` partials added into one float,
    // one partial a thread.
    auto combine = [](double threads) {
        auto f = same_work_in_threads(threads);
        f[F::points_computed_total] = threads;
        f[F::bytes_at_root] = 4;
        return f;
    };
    const AnalyticStageCost few = a.model.stage_cost(combine(4096), 0);
    const AnalyticStageCost many = a.model.stage_cost(combine(262144), 0);
    CHECK(few.atomic_contention_ms > 0);
    CHECK(many.atomic_contention_ms > 32 * few.atomic_contention_ms);
    CHECK(many.kernel_ms >= many.atomic_contention_ms);
    // 262,144 float updates of one address, 1.76 ns each on an H100: ~0.46 ms
    // (sum_of_squares' atomic splits measured 0.46 ms beyond their partials).
    CHECK(many.atomic_contention_ms == Approx(262144 * 1.76e-6).epsilon(0.01));
    // The same points stored one per point: nothing to wait for.
    auto distinct = combine(262144);
    distinct[F::bytes_at_root] = 4 * 262144;
    CHECK(a.model.stage_cost(distinct, 0).atomic_contention_ms == 0);
    // The same updates serially in one thread: its chain, not contention.
    auto serial = combine(1);
    serial[F::points_computed_total] = 262144;
    const AnalyticStageCost one = a.model.stage_cost(serial, 0);
    CHECK(one.atomic_contention_ms == 0);
    CHECK(one.serial_latency_ms > many.atomic_contention_ms);
}

TEST_CASE("analytic model: unrolled points overlap their loads, so the serial chain is shorter",
          "[analytic]") {
    Analytic a;
    auto f = same_work_in_threads(4096); // 1024 points a thread
    const double serial = a.model.stage_cost(f, 0).serial_latency_ms;
    f[F::unrolled_loop_extent] = 16;
    const double unrolled = a.model.stage_cost(f, 0).serial_latency_ms;
    CHECK(unrolled < serial);
    CHECK(unrolled > 0);
}

TEST_CASE("analytic model: a root kernel pays launch overhead, a block-level stage pays barriers",
          "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    const auto root = a.model.stage_cost(f, 0);
    CHECK(root.launch_ms > 0);
    CHECK(root.barrier_ms == 0);
    f[F::num_productions] = f[F::num_blocks];
    f[F::num_realizations] = f[F::num_blocks];
    const auto inner = a.model.stage_cost(f, 0);
    CHECK(inner.launch_ms == 0);
    CHECK(inner.barrier_ms > 0);
}

TEST_CASE("analytic model: two kernels cost more than one with the same total work", "[analytic]") {
    Analytic a;
    auto half = test::root_kernel_row();
    for (F x : {F::num_blocks, F::num_tasks, F::points_computed_total, F::num_scalars,
                F::unique_global_bytes_read_per_realization})
        half[x] *= 0.5;
    StateFeatures two;
    two.stage_ids = {0, 0};
    two.schedule = {half, half};
    StateFeatures one;
    one.stage_ids = {0};
    one.schedule = {test::root_kernel_row()};
    std::vector<double> c;
    a.model.evaluate({&one, &two}, c);
    CHECK(c[1] > c[0]);
}

TEST_CASE("analytic model: register working set beyond the register file spills and costs more",
          "[analytic]") {
    Analytic a;
    auto f = test::root_kernel_row();
    const double base = a.cost(f);
    f[F::working_set_at_thread] = 4096; // 1024 registers' worth per thread
    const auto c = a.model.stage_cost(f, 0);
    CHECK(c.spill_ms > 0);
    CHECK(a.cost(f) > base);
}

TEST_CASE("analytic model: costs are finite and positive on synthetic states", "[analytic]") {
    std::mt19937_64 rng(3);
    const GpuProfile g = test::h100();
    AnalyticGpuCostModel m(g);
    for (int p = 0; p < 20; ++p) {
        const auto sp = random_synthetic_pipeline(rng);
        m.set_pipeline(sp.stages);
        for (int s = 0; s < 20; ++s) {
            const auto st = random_synthetic_state(sp, g, rng);
            std::vector<double> c;
            std::vector<std::vector<double>> per;
            m.evaluate({&st}, c, &per);
            REQUIRE(std::isfinite(c[0]));
            REQUIRE(c[0] > 0);
            REQUIRE(per[0].size() == st.schedule.size());
        }
    }
}

TEST_CASE("analytic model: a profile without bandwidth is rejected by name", "[analytic]") {
    GpuProfile g = test::h100();
    g.memory_bandwidth_gb_per_s = 0;
    CHECK_THROWS_WITH(AnalyticGpuCostModel(g), Catch::Contains("memory_bandwidth_gb_per_s"));
}
