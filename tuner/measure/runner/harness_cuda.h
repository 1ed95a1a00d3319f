#pragma once
// The CUDA driver as the benchmark harness (benchmark_main.cpp) reaches it,
// for what Halide's runtime does not do: events for device-side timing
// (device_timer.h), a device buffer to flush the L2 with (cache_flush.h)
// and the device's PCI address for NVML (gpu_telemetry.h).
//
// No link-time CUDA dependency, as everywhere in gpusched
// (tuner/cuda_device_query.h): the entry points are looked up with dlsym in
// the libcuda.so.1 the process already loaded (gpu_api_preload.h), and the
// declarations below stand in for cuda.h. The context is the one Halide's
// runtime created in the sample's first call (halide_cuda_acquire_context,
// exported by the harness's runtime); every driver call here runs with it
// current (CudaContextScope), as Halide's own calls do.
//
// Invariant: nothing here creates a context. Before the runtime has one
// (or in a harness linked with another runtime) CudaContextScope::ok() is
// false, and callers fall back to what a CPU build does.

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpusched::harness {

// cuda.h's types, as the driver ABI has them on 64-bit Linux.
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;
using CUdeviceptr = unsigned long long;

struct CudaDriver {
    // The _v2 names are the ones cuda.h maps the plain names to since CUDA
    // 3.2/4.0 (64-bit device pointers); the plain symbols keep the old ABI.
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;  // cuCtxPushCurrent_v2
    CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr; // cuCtxPopCurrent_v2
    CUresult (*cuCtxGetDevice)(CUdevice *) = nullptr;
    CUresult (*cuCtxSynchronize)() = nullptr;
    CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
    CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
    CUresult (*cuEventSynchronize)(CUevent) = nullptr;
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
    CUresult (*cuMemAlloc)(CUdeviceptr *, std::size_t) = nullptr;          // cuMemAlloc_v2
    CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, std::size_t) = nullptr; // cuMemsetD32_v2
    CUresult (*cuDeviceGetPCIBusId)(char *, int, CUdevice) = nullptr;
};

// The driver's entry points, loaded once; nullptr where libcuda.so.1 is not
// loaded or lacks one of them (why is in cuda_driver_problem()).
const CudaDriver *cuda_driver();
std::string cuda_driver_problem();

// Makes the context Halide's runtime uses current on this thread for the
// scope (pushed, then popped, as Halide's own calls do), so that a driver
// call here acts on the same context as the pipeline's.
class CudaContextScope {
public:
    CudaContextScope();
    ~CudaContextScope();
    CudaContextScope(const CudaContextScope &) = delete;
    CudaContextScope &operator=(const CudaContextScope &) = delete;

    // False when there is no driver, no Halide CUDA runtime, or no context
    // yet; problem() says which.
    bool ok() const { return pushed_; }
    const std::string &problem() const { return problem_; }
    const CudaDriver &driver() const { return *driver_; }

private:
    const CudaDriver *driver_ = nullptr;
    bool acquired_ = false, pushed_ = false;
    std::string problem_;
};

// "cuEventRecord failed (CUDA error 700)": a message that names CUDA, so the
// driver classifies the harness's exit as a device error (runner.cpp).
std::string cuda_failure(const char *call, CUresult rc);

// Ends the harness as a pipeline that failed on the device does (exit 3,
// runner_main::kExitPipelineFailed, the message on stderr): a driver call
// that failed after it had worked is the device's error, not the sample's.
[[noreturn]] void end_with_device_error(const std::string &message);

} // namespace gpusched::harness
