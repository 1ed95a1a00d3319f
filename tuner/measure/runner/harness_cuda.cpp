#include "tuner/measure/runner/harness_cuda.h"

#include <cstdio>
#include <cstdlib>

#include <dlfcn.h>

#include "tuner/dl_symbol.h"

// Defined by Halide 14's CUDA runtime (src/runtime/cuda.cpp, checked in the
// runtime object: halide_default_cuda_acquire_context returns the context
// it made, or none with create = false, and pushes nothing; the release is a
// no-op by default, but a user's override may pair them). Weak, so a harness
// linked with an OpenCL or CPU runtime has none.
extern "C" int halide_cuda_acquire_context(void *user_context, void **ctx, bool create) __attribute__((weak));
extern "C" int halide_cuda_release_context(void *user_context) __attribute__((weak));

namespace gpusched::harness {
namespace {

struct Loaded {
    CudaDriver driver;
    bool ok = false;
    std::string problem;
};

Loaded load_driver() {
    Loaded l;
    // Already loaded by preload_gpu_apis (and by Halide's runtime): this only
    // takes a handle on it. RTLD_NOLOAD: a process without it gets none.
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so", RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        l.problem = "libcuda.so.1 is not loaded";
        return l;
    }
    CudaDriver &d = l.driver;
    const bool all = load_symbol(h, "cuCtxPushCurrent_v2", d.cuCtxPushCurrent) &&
                     load_symbol(h, "cuCtxPopCurrent_v2", d.cuCtxPopCurrent) &&
                     load_symbol(h, "cuCtxGetDevice", d.cuCtxGetDevice) &&
                     load_symbol(h, "cuCtxSynchronize", d.cuCtxSynchronize) &&
                     load_symbol(h, "cuEventCreate", d.cuEventCreate) &&
                     load_symbol(h, "cuEventRecord", d.cuEventRecord) &&
                     load_symbol(h, "cuEventSynchronize", d.cuEventSynchronize) &&
                     load_symbol(h, "cuEventElapsedTime", d.cuEventElapsedTime) &&
                     load_symbol(h, "cuMemAlloc_v2", d.cuMemAlloc) &&
                     load_symbol(h, "cuMemsetD32_v2", d.cuMemsetD32) &&
                     load_symbol(h, "cuDeviceGetPCIBusId", d.cuDeviceGetPCIBusId);
    if (!all) {
        l.problem = std::string("libcuda.so.1 lacks an entry point the harness needs (") + dlerror() + ")";
        return l;
    }
    l.ok = true;
    return l;
}

const Loaded &loaded() {
    static const Loaded l = load_driver();
    return l;
}

} // namespace

const CudaDriver *cuda_driver() {
    return loaded().ok ? &loaded().driver : nullptr;
}

std::string cuda_driver_problem() {
    return loaded().problem;
}

CudaContextScope::CudaContextScope() {
    driver_ = cuda_driver();
    if (!driver_) {
        problem_ = cuda_driver_problem();
        return;
    }
    if (!halide_cuda_acquire_context || !halide_cuda_release_context) {
        problem_ = "the harness's Halide runtime has no CUDA";
        return;
    }
    void *ctx = nullptr;
    const int err = halide_cuda_acquire_context(nullptr, &ctx, /*create=*/false);
    acquired_ = err == 0;
    if (err != 0 || !ctx) {
        problem_ = "Halide's CUDA runtime has no context yet";
        return;
    }
    if (CUresult rc = driver_->cuCtxPushCurrent(ctx); rc != 0) {
        problem_ = cuda_failure("cuCtxPushCurrent", rc);
        return;
    }
    pushed_ = true;
}

CudaContextScope::~CudaContextScope() {
    if (pushed_) {
        CUcontext popped = nullptr;
        driver_->cuCtxPopCurrent(&popped);
    }
    if (acquired_) halide_cuda_release_context(nullptr);
}

std::string cuda_failure(const char *call, CUresult rc) {
    return std::string(call) + " failed (CUDA error " + std::to_string(rc) + ")";
}

void end_with_device_error(const std::string &message) {
    constexpr int kExitPipelineFailed = 3; // runner_main_support.h
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(nullptr);
    std::_Exit(kExitPipelineFailed);
}

} // namespace gpusched::harness
