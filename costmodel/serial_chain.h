#pragma once
// A thread's serial chain (issue 27), shared by the analytic model's serial
// latency and the cost formula's c30/c31 terms: the throughput terms assume
// enough threads to keep the GPU busy, but each launched thread still runs
// its points one after another, and waves of blocks run one after another.
// This is what makes a reduction left to a handful of threads slow, however
// little it moves.

#include <algorithm>
#include <cmath>

#include "costmodel/schedule_features.h"

namespace gpusched {

// Loads one thread has in flight in a serial loop gpusched does not unroll:
// LLVM's NVPTX backend partially unrolls small loops, ~4 iterations.
inline constexpr double kLoadsInFlightPerThread = 4;

struct SerialChain {
    double waves = 1;             // waves of blocks, one after another
    double points_per_thread = 1; // each thread's points, one after another
    double load_steps = 1;        // its loads waited for, a few in flight (all its unrolled ones)
};

// The points each launched thread runs one after another (at least 1).
inline double points_per_thread(const ScheduleFeatures &f, double points) {
    using F = ScheduleFeature;
    return std::max(points / (std::max(f[F::num_blocks], 1.0) * std::max(f[F::num_threads_per_block], 1.0)),
                    1.0);
}

// points: the stage's points computed; wave: blocks resident at once.
inline SerialChain serial_chain(const ScheduleFeatures &f, double points, double wave) {
    using F = ScheduleFeature;
    const double blocks = std::max(f[F::num_blocks], 1.0);
    SerialChain c;
    c.waves = std::ceil(blocks / wave);
    c.points_per_thread = points_per_thread(f, points);
    c.load_steps =
        std::ceil(c.points_per_thread / std::max(kLoadsInFlightPerThread, f[F::unrolled_loop_extent]));
    return c;
}

} // namespace gpusched
