#pragma once
// Reads the local GPUs' properties through the CUDA driver API, loaded at run
// time with dlopen so gpusched runs (and builds) on machines with no NVIDIA
// driver. The result is a GpuProfile per device, named "local:<index>".

#include <string>
#include <vector>

#include "common/gpu_profile.h"

namespace gpusched {

struct LocalGpuQuery {
    std::vector<GpuProfile> devices;
    std::string problem;    // why there are none: no driver, cuInit failed, no devices
    int driver_version = 0; // cuDriverGetVersion: 1000 * major + 10 * minor (12040 = 12.4); 0 unknown
};

LocalGpuQuery query_local_gpus();

} // namespace gpusched
