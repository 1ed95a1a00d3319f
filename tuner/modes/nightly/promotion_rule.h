#pragma once
// When a pipeline's new schedule replaces the promoted one: only when its
// measured time beats the promoted one's by more than the measurement noise,
// so that a night of noise does not swap schedules back and forth.
//
// The runner (tuner/measure/runner/runner.h) records, per benchmark process, the
// minimum and the median of its timed repetitions (and how many); the
// median is the time every mode ranks by. The noise of a measurement is how
// far its median sits above its minimum, relative to the median:
//     noise = (median - min) / median
// the spread of the repetitions in that process. The bar a candidate must
// clear is the larger of the two measurements' noise and a floor (the
// config's noise_floor, default 1%), because repetitions inside one process
// share its clocks, caches and placement and so understate the variation
// between two processes on two nights:
//     promote  iff  candidate.median < promoted.median * (1 - bar)
// Times of two devices are never compared: a promoted schedule measured on
// another device is kept, with the reason.

#include <cstdint>
#include <optional>
#include <string>

namespace gpusched {

// One measured schedule: what was timed where.
struct MeasuredTime {
    std::string device;
    double median_ms = 0, min_ms = 0;
    int64_t reps = 0;
    int64_t run_id = 0, sample_id = 0;
};

// (median - min) / median; 0 for a degenerate measurement.
double measurement_noise(const MeasuredTime &t);

struct PromotionDecision {
    bool promote = false;
    double bar = 0;     // the relative gain needed
    double gain = 0;    // 1 - candidate / promoted (negative: slower)
    std::string reason; // one line, for the summary
};

// promoted: the folder's current schedule for this pipeline, if any;
// promoted_files_ok: its files are there as promoted (else it is replaced).
PromotionDecision decide_promotion(const MeasuredTime &candidate, const std::optional<MeasuredTime> &promoted,
                                   bool promoted_files_ok, double noise_floor);

} // namespace gpusched
