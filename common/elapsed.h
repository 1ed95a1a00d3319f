#pragma once
// Wall-clock seconds since a steady-clock time point: what the search's
// phases, a measuring round's steps and a run's budgets are timed with; and
// seconds since the Unix epoch, for times compared across processes and
// machines (a Slurm job's start beside the driver's submission).

#include <chrono>

namespace gpusched {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

inline double epoch_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace gpusched
