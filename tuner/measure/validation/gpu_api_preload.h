#pragma once
// Makes the GPU APIs findable by Halide 14's runtime in the runner programs.
//
// The runtime opens the API by its development name only
// (dlopen("libOpenCL.so"), dlopen("libcuda.so")), which the -dev packages
// install; a machine with just the OpenCL ICD loader or just the NVIDIA
// driver has only the versioned library (libOpenCL.so.1, libcuda.so.1), and
// every OpenCL run failed there with "OpenCL API not found: clGetPlatformIDs"
// (a bare Debian 12 root with pocl-opencl-icd and ocl-icd-libopencl1 only).
// When the open fails the runtime looks the symbols up among those already
// loaded, so loading the versioned libraries globally first is enough. A
// library that is not there is simply not loaded.

#include <dlfcn.h>

namespace gpusched {

inline void preload_gpu_apis() {
    for (const char *name : {"libOpenCL.so.1", "libcuda.so.1"})
        dlopen(name, RTLD_NOW | RTLD_GLOBAL);
}

} // namespace gpusched
