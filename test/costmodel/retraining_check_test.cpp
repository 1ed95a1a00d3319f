// Cross-validating a retraining before Autotune adopts it
// (costmodel/retraining_check.h): it keeps weights whose retrained copies
// rank held-out samples worse and pick no better, adopts a retraining that
// does better, and says when it cannot judge.
#include "test/catch2_compat.h"

#include "costmodel/retraining_check.h"
#include "costmodel/training.h"
#include "fixtures.h"
#include "known_structure.h"

using namespace gpusched;
using gpusched::test::known_structure_data;

namespace {

TrainingOptions options(int epochs, double learning_rate) {
    TrainingOptions opt;
    opt.epochs = epochs;
    opt.learning_rate = learning_rate;
    opt.batch_size = 32;
    opt.formula = formula_context_for(test::h100());
    return opt;
}

} // namespace

TEST_CASE("cross-validation adopts a retraining that ranks held-out samples better than its start",
          "[training][retraining-check]") {
    // A start that ranks this structure badly: trained on the same states
    // with their times reversed (the slowest called fastest).
    const auto data = known_structure_data(6, 32, 1);
    auto reversed = data;
    for (auto &p : reversed)
        for (double &t : p.runtimes_ms)
            t = 1.0 / t;
    NetworkWeights start = NetworkWeights::initial(3);
    TrainingOptions wrong = options(300, 1e-2);
    wrong.validation_fraction = 0;
    train_network(start, reversed, wrong);
    const RetrainingCheck check = cross_validate_retraining(start, data, options(300, 1e-2));
    INFO(describe(check));
    CHECK(check.folds == 2);
    CHECK(check.judged_folds == 2);
    CHECK(check.held_out_samples == 6 * 32); // every sample judged once, in its fold
    // (The network's structure resists the reversed times: tau about 0.6,
    // below the untrained network's 0.76; retraining on the true times
    // recovers it.)
    CHECK(check.kendall_retrained > check.kendall_start + 0.1);
    CHECK_FALSE(check.keep_start());
}

TEST_CASE("cross-validation adopts a retraining that sharpens the pick even where it lowers tau",
          "[training][retraining-check]") {
    // Untrained weights already order these states by their work (tau about
    // 0.76); training, whose loss weighs the fast end, picks better and may
    // reorder the slow samples. A better pick is reason enough to adopt.
    const auto data = known_structure_data(6, 32, 1);
    const RetrainingCheck check =
        cross_validate_retraining(NetworkWeights::initial(3), data, options(300, 1e-2));
    INFO(describe(check));
    CHECK(check.judged_folds == 2);
    CHECK(check.slowdown_retrained < check.slowdown_start);
    CHECK_FALSE(check.keep_start());
}

TEST_CASE(
    "cross-validation keeps the starting weights when their retrained copies rank held-out samples worse",
    "[training][retraining-check]") {
    // Weights that already rank this structure well, then a retraining that
    // wrecks them (a learning rate thousands of times too large): the
    // check must see the held-out ranking fall and keep the start.
    const auto data = known_structure_data(6, 32, 1);
    NetworkWeights start = NetworkWeights::initial(3);
    TrainingOptions good = options(300, 1e-2);
    good.validation_fraction = 0;
    train_network(start, data, good);
    const RetrainingCheck check = cross_validate_retraining(start, data, options(20, 30.0));
    INFO(describe(check));
    CHECK(check.judged_folds == 2);
    CHECK(check.kendall_start > 0.6);
    CHECK(check.kendall_retrained < check.kendall_start);
    CHECK(check.slowdown_retrained >= check.slowdown_start);
    CHECK(check.keep_start());
}

TEST_CASE(
    "cross-validation with fewer than two held-out samples of any pipeline judges nothing and keeps nothing",
    "[training][retraining-check]") {
    // Two samples per pipeline: each fold holds one of each, no pair to rank.
    const auto data = known_structure_data(4, 2, 5);
    const RetrainingCheck check =
        cross_validate_retraining(NetworkWeights::initial(1), data, options(5, 1e-3));
    CHECK(check.judged_folds == 0);
    CHECK_FALSE(check.decided());
    CHECK_FALSE(check.keep_start());
    CHECK_THAT(describe(check), Catch::Contains("nothing to judge"));
}

TEST_CASE("cross-validation is deterministic for a seed", "[training][retraining-check]") {
    const auto data = known_structure_data(3, 12, 7);
    const NetworkWeights start = NetworkWeights::initial(2);
    const RetrainingCheck a = cross_validate_retraining(start, data, options(10, 1e-2));
    const RetrainingCheck b = cross_validate_retraining(start, data, options(10, 1e-2));
    CHECK(a.kendall_start == b.kendall_start);
    CHECK(a.kendall_retrained == b.kendall_retrained);
    CHECK(a.held_out_samples == b.held_out_samples);
}
