#include "tuner/measure/runner/device_traits.h"

#include "tuner/cuda_device_query.h"
#include "tuner/measure/runner/cache_flush_size.h"
#include "tuner/measure/runner/cuda_driver_check.h"
#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched {

bool benchmarks_the_batch_library(DeviceKind kind) {
    switch (kind) {
    case DeviceKind::Cuda:
        return true;
    case DeviceKind::OpenCl:
        return false;
    }
    return false;
}

std::string batch_library_problem(DeviceKind kind, const std::string &library) {
    switch (kind) {
    case DeviceKind::Cuda:
        return cuda_driver_problem_for(library);
    case DeviceKind::OpenCl:
        // Its runtime is checked when its runner is made (a probe kernel).
        return {};
    }
    return {};
}

NodeDevice node_device(DeviceKind kind, const std::string &host, const std::string &work_dir) {
    NodeDevice d;
    switch (kind) {
    case DeviceKind::Cuda: {
        // Slurm already set CUDA_VISIBLE_DEVICES to the GPU it allocated
        // (--gres), so the benchmark inherits it rather than being told an index.
        const LocalGpuQuery q = query_local_gpus();
        if (q.devices.empty()) {
            d.problem =
                "no GPU on node " + host + " (" + q.problem + "); does the job ask for one (--gres gpu:1)?";
            return d;
        }
        d.name = q.devices.front().description;
        d.last_level_cache_bytes = q.devices.front().l2_cache_bytes;
        return d;
    }
    case DeviceKind::OpenCl:
        if (!opencl_runtime_present()) {
            d.problem = "no OpenCL runtime on node " + host;
            return d;
        }
        d.name = pocl_device_name();
        d.last_level_cache_bytes = host_last_level_cache_bytes();
        // POCL caches compiled kernels under $HOME by default; keep them with the attempt.
        d.env["POCL_CACHE_DIR"] = work_dir + "/pocl-cache";
        return d;
    }
    return d;
}

std::string device_name_from_driver(DeviceKind kind, const std::string &fallback) {
    switch (kind) {
    case DeviceKind::Cuda: {
        const LocalGpuQuery q = query_local_gpus();
        return q.devices.empty() ? fallback : q.devices.front().description;
    }
    case DeviceKind::OpenCl:
        return pocl_device_name();
    }
    return fallback;
}

} // namespace gpusched
