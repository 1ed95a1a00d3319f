// The promotion rule (tuner/modes/nightly/promotion_rule.h) on its own: a
// candidate replaces the promoted schedule only when faster by more than the
// larger of the two measurements' noise and the floor, never across devices.

#include "test/catch2_compat.h"

#include "tuner/modes/nightly/promotion_rule.h"

using namespace gpusched;

namespace {

MeasuredTime timed(double median, double min, int64_t run, const std::string &device = "pocl-cpu") {
    MeasuredTime t;
    t.device = device;
    t.median_ms = median;
    t.min_ms = min;
    t.reps = 20;
    t.run_id = run;
    t.sample_id = run * 10;
    return t;
}

} // namespace

TEST_CASE("the noise of a measurement is its median's distance above its minimum, relative to the median",
          "[nightly][promotion]") {
    CHECK(measurement_noise(timed(2.0, 1.9, 1)) == Approx(0.05));
    CHECK(measurement_noise(timed(2.0, 2.0, 1)) == 0);
    CHECK(measurement_noise(timed(0, 0, 1)) == 0);
}

TEST_CASE("promotion refuses a candidate faster by less than the noise and takes one faster by more",
          "[nightly][promotion]") {
    const MeasuredTime promoted = timed(1.00, 0.97, 1); // 3% noise
    // 2% faster, quiet itself: within the promoted time's 3% noise.
    PromotionDecision within = decide_promotion(timed(0.98, 0.98, 2), promoted, true, 0.01);
    CHECK_FALSE(within.promote);
    CHECK(within.bar == Approx(0.03));
    CHECK(within.reason.find("within the noise bar of 3.0%") != std::string::npos);
    // 5% faster: beyond it.
    PromotionDecision beyond = decide_promotion(timed(0.95, 0.94, 2), promoted, true, 0.01);
    CHECK(beyond.promote);
    CHECK(beyond.reason.find("5.0% faster, more than the noise bar of 3.0%") != std::string::npos);
    // 5% faster, but the candidate's own repetitions spread 10%.
    CHECK_FALSE(decide_promotion(timed(0.95, 0.855, 2), promoted, true, 0.01).promote);
    // The floor holds when both measurements look quiet.
    CHECK_FALSE(decide_promotion(timed(0.995, 0.995, 2), timed(1.0, 1.0, 1), true, 0.01).promote);
    // Slower is refused as such.
    CHECK(decide_promotion(timed(1.2, 1.2, 2), promoted, true, 0.01).reason.rfind("not faster", 0) == 0);
}

TEST_CASE("promotion never compares times of two devices and promotes the first schedule of a pipeline",
          "[nightly][promotion]") {
    const PromotionDecision other =
        decide_promotion(timed(0.1, 0.1, 2, "NVIDIA H100"), timed(1.0, 1.0, 1), true, 0.01);
    CHECK_FALSE(other.promote);
    CHECK(other.reason.find("never compared") != std::string::npos);
    CHECK(decide_promotion(timed(1.0, 1.0, 2), std::nullopt, false, 0.01).promote);
    // Files gone from the folder: the recorded time no longer describes them.
    CHECK(decide_promotion(timed(5.0, 5.0, 2), timed(1.0, 1.0, 1), false, 0.01).promote);
    // The same sample again is not a new schedule.
    CHECK_FALSE(decide_promotion(timed(1.0, 1.0, 1), timed(1.0, 1.0, 1), true, 0.01).promote);
}
