#pragma once
// Wall-clock seconds since a steady-clock time point: what the search's
// phases, a measuring round's steps and a run's budgets are timed with.

#include <chrono>

namespace gpusched {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace gpusched
