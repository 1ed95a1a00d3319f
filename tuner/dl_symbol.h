#pragma once
// A C entry point looked up in a library opened with dlopen, typed as the
// function pointer it is stored in: how gpusched reaches the CUDA driver and
// NVML without linking them (tuner/cuda_device_query.cpp, and the benchmark
// harness's tuner/measure/runner/harness_cuda.cpp and gpu_telemetry.cpp).

#include <dlfcn.h>

namespace gpusched {

// True when `name` is in the library; fn is null otherwise.
template <typename F> bool load_symbol(void *handle, const char *name, F &fn) {
    fn = reinterpret_cast<F>(dlsym(handle, name));
    return fn != nullptr;
}

} // namespace gpusched
