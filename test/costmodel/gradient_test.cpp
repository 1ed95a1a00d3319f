// The hand-written backward pass matches finite differences, and the
// training forward pass matches the fast inference path.
#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>

#include "costmodel/analytic_cost_model.h"
#include "costmodel/network_cost_model.h"
#include "costmodel/network_evaluator.h"
#include "costmodel/network_gradient.h"
#include "fixtures.h"

using namespace gpusched;

namespace {

struct Problem {
    PreparedPipeline pipe;
    std::vector<PipelineFeatures> stages;
    std::vector<StateFeatures> states;
    std::vector<double> params;
    FormulaContext ctx;
};

Problem make_problem(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const GpuProfile g = test::h100();
    Problem p;
    SyntheticPipeline sp;
    do
        sp = random_synthetic_pipeline(rng);
    while (sp.stages.size() < 3);
    p.stages = sp.stages;
    for (int i = 0; i < 8; ++i)
        p.states.push_back(random_synthetic_state(sp, g, rng));
    AnalyticGpuCostModel teacher(g);
    teacher.set_pipeline(p.stages);
    std::vector<const StateFeatures *> ptrs;
    for (const auto &s : p.states)
        ptrs.push_back(&s);
    std::vector<double> runtimes;
    teacher.evaluate(ptrs, runtimes);
    p.ctx = formula_context_for(g);
    p.pipe = prepare_pipeline(p.stages, p.states, runtimes, p.ctx);
    // Random weights with some negative coefficient pre-activations, so the
    // penalty is exercised and softplus is away from its linear regime.
    NetworkWeights w = NetworkWeights::initial(seed);
    std::uniform_real_distribution<float> d(-1.0f, 2.0f);
    for (auto &b : w.coef_b)
        b = d(rng);
    for (auto &b : w.schedule_b)
        b = 0.5f * d(rng);
    const auto flat = w.flatten();
    p.params.assign(flat.begin(), flat.end());
    return p;
}

} // namespace

TEST_CASE("gradient: backward pass matches central finite differences", "[gradient]") {
    Problem p = make_problem(21);
    std::vector<int> batch(p.pipe.samples.size());
    for (std::size_t i = 0; i < batch.size(); ++i)
        batch[i] = static_cast<int>(i);
    const double penalty = 0.05;
    std::vector<double> grad(p.params.size(), 0.0);
    const double loss = batch_loss(p.params, p.pipe, batch, penalty, &grad);
    REQUIRE(std::isfinite(loss));
    REQUIRE(loss > 0);

    // Every parameter of the coefficient layer and both biases, plus a random
    // sample of the two head matrices.
    std::vector<std::size_t> check;
    const std::size_t coef_start = p.params.size() - std::size_t(kNumCoefficients) * (kHiddenWidth + 1);
    for (std::size_t i = coef_start; i < p.params.size(); ++i)
        check.push_back(i);
    std::mt19937_64 rng(4);
    std::uniform_int_distribution<std::size_t> pick(0, coef_start - 1);
    for (int i = 0; i < 400; ++i)
        check.push_back(pick(rng));

    int nonzero = 0, mismatches = 0;
    double worst = 0;
    for (std::size_t i : check) {
        const double h = 1e-6 * std::max(1.0, std::abs(p.params[i]));
        std::vector<double> plus = p.params, minus = p.params;
        plus[i] += h;
        minus[i] -= h;
        const double fd = (batch_loss(plus, p.pipe, batch, penalty, nullptr) -
                           batch_loss(minus, p.pipe, batch, penalty, nullptr)) /
                          (2 * h);
        const double err = std::abs(fd - grad[i]) / std::max(1e-6, std::abs(fd) + std::abs(grad[i]));
        if (std::abs(grad[i]) > 1e-9) ++nonzero;
        // A kink (ReLU at exactly 0) inside [x-h, x+h] can break one
        // comparison; tolerate a handful, never a pattern.
        if (err > 1e-4 && std::abs(fd - grad[i]) > 1e-8) ++mismatches;
        worst = std::max(worst, std::abs(fd - grad[i]));
    }
    INFO("checked " << check.size() << " parameters, " << nonzero << " non-zero, worst abs diff " << worst);
    CHECK(nonzero > 100);
    CHECK(mismatches <= 2);
}

TEST_CASE("gradient: a zero penalty removes exactly the penalty's contribution", "[gradient]") {
    Problem p = make_problem(22);
    std::vector<int> batch = {0, 1, 2, 3};
    // The paper's relative-throughput term alone, from the predictions
    // (network_gradient.h): 1/n sum (t_ref/p - t_ref/t)^2, t_ref the fastest
    // measured, p clamped at kMinPredictedCostMs.
    const std::vector<double> predicted = predict_samples(p.params, p.pipe, batch);
    double t_ref = INFINITY;
    for (int s : batch)
        t_ref = std::min(t_ref, p.pipe.samples[s].runtime_ms);
    double throughput = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        const double diff =
            t_ref / std::max(predicted[i], kMinPredictedCostMs) - t_ref / p.pipe.samples[batch[i]].runtime_ms;
        throughput += diff * diff / static_cast<double>(batch.size());
    }
    const double without = batch_loss(p.params, p.pipe, batch, 0.0, nullptr);
    const double with = batch_loss(p.params, p.pipe, batch, 1.0, nullptr);
    INFO("throughput term " << throughput << ", loss with penalty 0: " << without << ", 1: " << with);
    CHECK(without == Approx(throughput).epsilon(1e-12));
    CHECK(with > without); // some pre-activations are negative by construction
    // The penalty's contribution is proportional to its weight.
    CHECK(batch_loss(p.params, p.pipe, batch, 3.0, nullptr) - without ==
          Approx(3 * (with - without)).epsilon(1e-9));
}

TEST_CASE("gradient: training forward pass agrees with the fast inference path", "[gradient]") {
    Problem p = make_problem(23);
    std::vector<float> flat(p.params.begin(), p.params.end());
    NetworkEvaluator ev(NetworkWeights::unflatten(flat), p.ctx);
    ev.set_pipeline(p.stages);
    std::vector<int> all(p.states.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        all[i] = static_cast<int>(i);
    const auto train_pred = predict_samples(p.params, p.pipe, all);
    for (std::size_t s = 0; s < p.states.size(); ++s) {
        std::vector<const ScheduleFeatures *> rows;
        for (const auto &r : p.states[s].schedule)
            rows.push_back(&r);
        std::vector<double> costs(rows.size());
        ev.evaluate_rows(p.states[s].stage_ids.data(), rows.data(), rows.size(), costs.data());
        double total = 0;
        for (double c : costs)
            total += c;
        CHECK(total == Approx(train_pred[s]).epsilon(1e-4));
    }
}

TEST_CASE("gradient: the pairwise ranking and scale terms match central finite differences", "[gradient]") {
    Problem p = make_problem(33);
    std::vector<int> batch(p.pipe.samples.size());
    for (std::size_t i = 0; i < batch.size(); ++i)
        batch[i] = static_cast<int>(i);
    for (const LossWeights lw :
         {LossWeights{0, 1, 0, 0}, LossWeights{0, 0, 0, 1}, LossWeights{0.5, 2, 0.01, 0.7}}) {
        std::vector<double> grad(p.params.size(), 0.0);
        const double loss = batch_loss(p.params, p.pipe, batch, lw, &grad);
        REQUIRE(std::isfinite(loss));
        REQUIRE(loss > 0);
        const std::size_t coef_start = p.params.size() - std::size_t(kNumCoefficients) * (kHiddenWidth + 1);
        std::mt19937_64 rng(9);
        std::uniform_int_distribution<std::size_t> pick(0, p.params.size() - 1);
        int nonzero = 0, mismatches = 0;
        for (int q = 0; q < 300; ++q) {
            const std::size_t i =
                q < 64 ? coef_start + std::size_t(q) * 7 % (p.params.size() - coef_start) : pick(rng);
            const double h = 1e-6 * std::max(1.0, std::abs(p.params[i]));
            std::vector<double> plus = p.params, minus = p.params;
            plus[i] += h;
            minus[i] -= h;
            const double fd = (batch_loss(plus, p.pipe, batch, lw, nullptr) -
                               batch_loss(minus, p.pipe, batch, lw, nullptr)) /
                              (2 * h);
            if (grad[i] != 0) nonzero++;
            const double tol = 1e-5 + 1e-3 * std::max(std::abs(fd), std::abs(grad[i]));
            if (std::abs(fd - grad[i]) > tol) mismatches++;
        }
        CHECK(mismatches == 0);
        CHECK(nonzero > 50);
    }
}

TEST_CASE(
    "ranking term: zero weight leaves the paper's loss unchanged and a uniform runtime scale changes nothing",
    "[gradient]") {
    Problem p = make_problem(34);
    std::vector<int> batch(p.pipe.samples.size());
    for (std::size_t i = 0; i < batch.size(); ++i)
        batch[i] = static_cast<int>(i);
    CHECK(batch_loss(p.params, p.pipe, batch, LossWeights{1, 0, 0.05}, nullptr) ==
          batch_loss(p.params, p.pipe, batch, 0.05, nullptr));
    // Doubling every measured runtime keeps the pairs' order and their
    // log-ratio weights, so the ranking loss is the same.
    PreparedPipeline doubled = p.pipe;
    for (auto &s : doubled.samples)
        s.runtime_ms *= 2;
    CHECK(batch_loss(p.params, doubled, batch, LossWeights{0, 1, 0}, nullptr) ==
          Approx(batch_loss(p.params, p.pipe, batch, LossWeights{0, 1, 0}, nullptr)).epsilon(1e-12));
}

TEST_CASE("gradient: a batch drawing on two pipelines matches central finite differences", "[gradient]") {
    // The ranking across a pipeline's split variants: each sample predicted
    // with its own pipeline's features, one loss over all of them.
    Problem a = make_problem(35), b = make_problem(36);
    b.params = a.params;
    std::vector<BatchMember> members;
    for (int i = 0; i < 8; ++i)
        members.push_back({i % 2 ? &a.pipe : &b.pipe, i});
    std::vector<int> only_a = {0, 1, 2, 3, 4, 5, 6, 7};
    std::vector<BatchMember> members_a;
    for (int i : only_a)
        members_a.push_back({&a.pipe, i});
    const LossWeights lw{0.5, 2, 0.01, 0.7};
    // One pipeline's members: exactly the one-pipeline loss.
    CHECK(batch_loss(a.params, members_a, lw, nullptr) == batch_loss(a.params, a.pipe, only_a, lw, nullptr));

    std::vector<double> grad(a.params.size(), 0.0);
    const double loss = batch_loss(a.params, members, lw, &grad);
    REQUIRE(std::isfinite(loss));
    REQUIRE(loss > 0);
    std::mt19937_64 rng(10);
    std::uniform_int_distribution<std::size_t> pick(0, a.params.size() - 1);
    int nonzero = 0, mismatches = 0;
    for (int q = 0; q < 300; ++q) {
        const std::size_t i = pick(rng);
        const double h = 1e-6 * std::max(1.0, std::abs(a.params[i]));
        std::vector<double> plus = a.params, minus = a.params;
        plus[i] += h;
        minus[i] -= h;
        const double fd =
            (batch_loss(plus, members, lw, nullptr) - batch_loss(minus, members, lw, nullptr)) / (2 * h);
        if (grad[i] != 0) nonzero++;
        const double tol = 1e-5 + 1e-3 * std::max(std::abs(fd), std::abs(grad[i]));
        if (std::abs(fd - grad[i]) > tol) mismatches++;
    }
    CHECK(mismatches == 0);
    CHECK(nonzero > 50);
}
