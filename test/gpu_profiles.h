#pragma once
// The GPU the tests size their schedules for: the built-in H100 profile,
// the paper's target and gpusched's default.

#include "common/gpu_profile.h"

namespace gpusched::test {

inline GpuProfile h100() {
    return *find_builtin_gpu_profile("h100");
}

} // namespace gpusched::test
