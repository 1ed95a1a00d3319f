#include "test/catch2_compat.h"

#include "tuner/generate/sample_selection.h"

using namespace gpusched;

namespace {
SelectionCandidate c(double predicted, long spills, bool usable = true) {
    SelectionCandidate x;
    x.usable = usable;
    x.predicted_cost = predicted;
    x.spill_bytes = spills;
    return x;
}
} // namespace

TEST_CASE("the best predicted sample that does not spill is chosen", "[selection]") {
    CHECK(choose_sample({c(3, 0), c(1, 64), c(2, 0)}) == std::size_t(2));
}

TEST_CASE("when every sample spills, the best within 50% of the least spilling is chosen", "[selection]") {
    // Least spilling: 100 bytes; 140 is within 50%, 400 is not.
    CHECK(choose_sample({c(1, 400), c(3, 100), c(2, 140)}) == std::size_t(2));
}

TEST_CASE("unusable samples are never chosen", "[selection]") {
    CHECK(choose_sample({c(1, 0, false), c(5, 0)}) == std::size_t(1));
    CHECK_FALSE(choose_sample({c(1, 0, false)}).has_value());
}

TEST_CASE("ranking orders usable samples by prediction, missing predictions last", "[selection]") {
    SelectionCandidate none;
    none.usable = true;
    auto order = rank_by_prediction({none, c(2, 0), c(1, 0), c(0.5, 0, false)});
    REQUIRE(order.size() == 3);
    CHECK(order[0] == 2);
    CHECK(order[1] == 1);
    CHECK(order[2] == 0);
}
