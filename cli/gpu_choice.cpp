#include "cli/gpu_choice.h"

#include <stdexcept>

#include "tuner/cuda_device_query.h"

namespace gpusched::cli {

GpuProfile resolve_gpu(const std::string &choice) {
    if (choice == "auto") {
        LocalGpuQuery q = query_local_gpus();
        if (q.devices.empty())
            throw std::runtime_error("--gpu auto: " + q.problem + "; name a profile instead (" +
                                     builtin_gpu_profile_names() + ")");
        return q.devices.front();
    }
    if (auto p = find_builtin_gpu_profile(choice)) return *p;
    throw std::runtime_error("unknown GPU profile '" + choice + "' (known: " + builtin_gpu_profile_names() +
                             ", or auto)");
}

} // namespace gpusched::cli
