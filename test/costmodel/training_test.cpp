// Training on data with known structure lowers the loss and learns to rank
// states it has not seen.
#include "test/catch2_compat.h"

#include <cmath>

#include "costmodel/network_cost_model.h"
#include "costmodel/training.h"
#include "db/rank_correlation.h"
#include "fixtures.h"
#include "known_structure.h"

using namespace gpusched;
using gpusched::test::known_structure_data;

TEST_CASE("training on data with known structure lowers the loss and ranks held-out states", "[training]") {
    const auto data = known_structure_data(12, 48, 1);
    NetworkWeights w = NetworkWeights::initial(3);
    TrainingOptions opt;
    opt.epochs = 300;
    opt.learning_rate = 1e-2;
    opt.batch_size = 32;
    opt.validation_fraction = 0.25;
    opt.formula = formula_context_for(test::h100());
    const TrainingReport rep = train_network(w, data, opt);
    INFO("train before: " << describe(rep.train_before));
    INFO("train after: " << describe(rep.train_after));
    INFO("validation before: " << describe(rep.validation_before));
    INFO("validation after: " << describe(rep.validation_after));
    CHECK(rep.validation_after.samples == 12 * 12);
    CHECK(rep.train_after.loss < 0.5 * rep.train_before.loss);
    CHECK(rep.validation_after.loss < 0.5 * rep.validation_before.loss);
    // The loss weighs samples by t_ref/t, so the fast end of the ranking is
    // learned best: the pick must be near-perfect, the full order good.
    // The untrained network already orders these states fairly well (about
    // 0.85 Spearman: ranks follow the amount of work, and inlined rows carry
    // only their calls), so the gain must show where the loss looks: the
    // predicted-best pick, at least three times closer to the true best.
    CHECK(rep.validation_after.best_predicted_slowdown < 0.05);
    CHECK(rep.validation_after.best_predicted_slowdown < rep.validation_before.best_predicted_slowdown / 3);
    CHECK(rep.validation_after.spearman > 0.8);
    CHECK(rep.validation_after.kendall > 0.65);
}

TEST_CASE("training is deterministic for a seed", "[training]") {
    const auto data = known_structure_data(3, 16, 2);
    TrainingOptions opt;
    opt.epochs = 5;
    opt.formula = formula_context_for(test::h100());
    const NetworkWeights initial = NetworkWeights::initial(1);
    NetworkWeights a = initial, b = initial, c = initial;
    const TrainingReport report = train_network(a, data, opt);
    train_network(b, data, opt);
    TrainingOptions other_seed = opt;
    other_seed.seed = opt.seed + 1;
    train_network(c, data, other_seed);
    // Training changed the weights (were it to do nothing, it would be
    // deterministic for any reason)...
    CHECK(report.steps > 0);
    CHECK(a.flatten() != initial.flatten());
    // ...the same seed gives the same weights, bit for bit...
    CHECK(a.flatten() == b.flatten());
    // ...and the seed is what decides: it picks the validation split and the batches.
    CHECK(a.flatten() != c.flatten());
}

TEST_CASE("training refuses a sample with a non-positive runtime, naming the pipeline", "[training]") {
    auto data = known_structure_data(1, 4, 3);
    data[0].runtimes_ms[2] = 0;
    NetworkWeights w = NetworkWeights::initial(1);
    TrainingOptions opt;
    CHECK_THROWS_WITH(train_network(w, data, opt), Catch::Contains("known 0") && Catch::Contains("sample 2"));
}

TEST_CASE("training judges the starting weights with the cost formula they were trained for",
          "[training][formula]") {
    // Weights from a format-1 file know nothing of formula 2's serial chain:
    // their "before" figures must be theirs, not the new formula's.
    std::mt19937_64 rng(9);
    const GpuProfile g = test::h100();
    std::vector<PipelineSamples> data;
    for (int p = 0; p < 3; ++p) {
        const auto sp = random_synthetic_pipeline(rng);
        PipelineSamples ps;
        ps.stages = sp.stages;
        for (int s = 0; s < 12; ++s) {
            ps.states.push_back(random_synthetic_state(sp, g, rng));
            ps.runtimes_ms.push_back(0.1 + 0.01 * s);
        }
        data.push_back(std::move(ps));
    }
    auto before = [&](int formula, int initial) {
        NetworkWeights w = NetworkWeights::initial(2);
        TrainingOptions opt;
        opt.epochs = 0;
        opt.formula = formula_context_for(g);
        opt.formula.version = formula;
        opt.initial_formula_version = initial;
        return train_network(w, data, opt).validation_before.loss;
    };
    CHECK(before(2, 1) == before(1, 1));
    CHECK(before(2, 1) != before(2, 2));
}

TEST_CASE(
    "a model trained on two pipelines whose times differ 1000x ranks within each as well as one trained on "
    "each alone",
    "[training]") {
    // Issue 31 (Halide issue 7086: mixing apps' samples silently trained a
    // bad model). The loss compares samples of one pipeline at a time, so a
    // pipeline that runs 1000x longer must not drown the other one out.
    std::vector<PipelineSamples> data = known_structure_data(2, 48, 5);
    for (double &t : data[1].runtimes_ms)
        t *= 1000;
    // The first 36 states of each train, the last 12 judge.
    auto split = [](const PipelineSamples &p, bool train) {
        PipelineSamples s;
        s.name = p.name;
        s.stages = p.stages;
        for (std::size_t i = train ? 0 : 36; i < (train ? 36 : p.states.size()); ++i) {
            s.states.push_back(p.states[i]);
            s.runtimes_ms.push_back(p.runtimes_ms[i]);
        }
        return s;
    };
    TrainingOptions opt;
    opt.epochs = 150;
    opt.learning_rate = 1e-2;
    opt.batch_size = 16;
    opt.formula = formula_context_for(test::h100());
    auto trained_on = [&](const std::vector<PipelineSamples> &train) {
        NetworkWeights w = NetworkWeights::initial(3);
        train_network(w, train, opt);
        return w;
    };
    const NetworkWeights both = trained_on({split(data[0], true), split(data[1], true)});
    auto kendall = [&](const NetworkWeights &w, int p) {
        const PipelineSamples held = split(data[static_cast<std::size_t>(p)], false);
        return db::kendall_tau_b(predict_runtimes(w, held, opt.formula), held.runtimes_ms).value_or(0);
    };
    for (int p = 0; p < 2; ++p) {
        const double alone = kendall(trained_on({split(data[static_cast<std::size_t>(p)], true)}), p);
        const double mixed = kendall(both, p);
        INFO("pipeline " << p << ": held-out Kendall trained alone " << alone << ", trained with the other "
                         << mixed);
        CHECK(alone > 0.3); // it learned something to compare against
        CHECK(mixed >= alone - 0.1);
    }
}

TEST_CASE("an anchor weight keeps training near the starting weights", "[training]") {
    const auto data = known_structure_data(3, 24, 4);
    TrainingOptions opt;
    opt.epochs = 40;
    opt.learning_rate = 1e-2;
    opt.formula = formula_context_for(test::h100());
    const NetworkWeights start = NetworkWeights::initial(2);
    auto distance = [&](double anchor) {
        TrainingOptions o = opt;
        o.anchor_weight = anchor;
        NetworkWeights w = start;
        train_network(w, data, o);
        const std::vector<float> a = w.flatten(), b = start.flatten();
        double d = 0;
        for (std::size_t i = 0; i < a.size(); ++i)
            d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        return std::sqrt(d);
    };
    const double free = distance(0), anchored = distance(10);
    INFO("distance from the start: free " << free << ", anchored " << anchored);
    CHECK(free > 0);
    CHECK(anchored < free / 5);
}

TEST_CASE("ranking across comparable pipelines teaches which pipeline's schedules are faster, which batches "
          "within each cannot",
          "[training]") {
    // A reduction and its split variant are two pipelines; the search
    // compares their predicted costs. The ranking loss within one pipeline
    // does not depend on the pipeline's scale, so training on A fast / B 30x
    // slower and on A 30x slower / B fast gives the same weights: at least
    // one of the two orders A and B wrongly. Batches mixing A's and B's
    // samples tell them apart.
    const std::vector<PipelineSamples> base = known_structure_data(2, 32, 8);
    auto scaled = [&](int slow) {
        std::vector<PipelineSamples> d = base;
        for (double &t : d[static_cast<std::size_t>(slow)].runtimes_ms)
            t *= 30;
        return d;
    };
    TrainingOptions opt;
    opt.epochs = 120;
    opt.learning_rate = 1e-2;
    opt.batch_size = 16;
    opt.throughput_weight = 0;
    opt.ranking_weight = 1;
    opt.formula = formula_context_for(test::h100());
    // Share of (A state, B state) pairs the weights order as the data does.
    auto cross_order = [&](const NetworkWeights &w, const std::vector<PipelineSamples> &d) {
        const std::vector<double> pa = predict_runtimes(w, d[0], opt.formula),
                                  pb = predict_runtimes(w, d[1], opt.formula);
        int right = 0, pairs = 0;
        for (std::size_t i = 0; i < pa.size(); ++i)
            for (std::size_t j = 0; j < pb.size(); ++j, ++pairs)
                right += (pa[i] < pb[j]) == (d[0].runtimes_ms[i] < d[1].runtimes_ms[j]) ? 1 : 0;
        return double(right) / pairs;
    };
    auto trained = [&](const std::vector<PipelineSamples> &d, double across) {
        TrainingOptions o = opt;
        o.comparable_sets = {{0, 1}};
        o.comparable_ranking_weight = across;
        NetworkWeights w = NetworkWeights::initial(3);
        train_network(w, d, o);
        return cross_order(w, d);
    };
    const double within_b_slow = trained(scaled(1), 0), within_a_slow = trained(scaled(0), 0);
    const double across_b_slow = trained(scaled(1), 1), across_a_slow = trained(scaled(0), 1);
    INFO("pairs ordered right: within pipelines only " << within_b_slow << " (B slow), " << within_a_slow
                                                       << " (A slow); across too " << across_b_slow << ", "
                                                       << across_a_slow);
    CHECK(std::min(within_b_slow, within_a_slow) < 0.6);
    CHECK(across_b_slow > 0.9);
    CHECK(across_a_slow > 0.9);
}

TEST_CASE("training refuses a comparable set naming a pipeline it does not have", "[training]") {
    std::vector<PipelineSamples> data = known_structure_data(2, 8, 2);
    TrainingOptions opt;
    opt.epochs = 1;
    opt.comparable_sets = {{0, 2}};
    opt.comparable_ranking_weight = 1;
    opt.formula = formula_context_for(test::h100());
    NetworkWeights w = NetworkWeights::initial(1);
    CHECK_THROWS_WITH(train_network(w, data, opt), Catch::Contains("comparable set names pipeline 2"));
}
