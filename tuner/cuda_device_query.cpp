#include "tuner/cuda_device_query.h"

#include <dlfcn.h>

#include "tuner/dl_symbol.h"

namespace gpusched {
namespace {

// The few driver API entry points we need, declared here so no CUDA header is
// required at build time. Values from cuda.h (CUdevice_attribute).
using CUresult = int;
using CUdevice = int;
constexpr int kMaxThreadsPerBlock = 1;
constexpr int kMaxSharedMemoryPerBlock = 8;
constexpr int kMemoryClockRate = 36;      // kHz
constexpr int kGlobalMemoryBusWidth = 37; // bits
constexpr int kL2CacheSize = 38;
constexpr int kMaxThreadsPerMultiprocessor = 39;
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kMaxSharedMemoryPerMultiprocessor = 81;
constexpr int kMaxRegistersPerMultiprocessor = 82;
constexpr int kMaxBlocksPerMultiprocessor = 106;
constexpr int kWarpSize = 10;

struct DriverApi {
    void *handle = nullptr;
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDeviceGetCount)(int *) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
    CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
    CUresult (*cuDriverGetVersion)(int *) = nullptr;
};

} // namespace

LocalGpuQuery query_local_gpus() {
    LocalGpuQuery q;
    DriverApi api;
    api.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api.handle) {
        q.problem = "no NVIDIA driver on this machine (libcuda.so.1 not found)";
        return q;
    }
    if (!load_symbol(api.handle, "cuInit", api.cuInit) ||
        !load_symbol(api.handle, "cuDeviceGetCount", api.cuDeviceGetCount) ||
        !load_symbol(api.handle, "cuDeviceGet", api.cuDeviceGet) ||
        !load_symbol(api.handle, "cuDeviceGetName", api.cuDeviceGetName) ||
        !load_symbol(api.handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute)) {
        q.problem = "libcuda.so.1 lacks the driver API entry points gpusched needs";
        return q;
    }
    if (load_symbol(api.handle, "cuDriverGetVersion", api.cuDriverGetVersion))
        api.cuDriverGetVersion(&q.driver_version);
    if (CUresult rc = api.cuInit(0); rc != 0) {
        q.problem = "the CUDA driver failed to initialise (cuInit error " + std::to_string(rc) + ")";
        return q;
    }
    int count = 0;
    if (api.cuDeviceGetCount(&count) != 0 || count == 0) {
        q.problem = "the CUDA driver reports no GPU";
        return q;
    }
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (api.cuDeviceGet(&dev, i) != 0) continue;
        char name[256] = {};
        api.cuDeviceGetName(name, sizeof name, dev);
        auto attr = [&](int a) {
            int v = 0;
            api.cuDeviceGetAttribute(&v, a, dev);
            return v;
        };
        GpuProfile p;
        p.name = "local:" + std::to_string(i);
        p.description = name;
        p.compute_capability = attr(kComputeCapabilityMajor) * 10 + attr(kComputeCapabilityMinor);
        p.sm_count = attr(kMultiprocessorCount);
        p.max_threads_per_block = attr(kMaxThreadsPerBlock);
        p.max_threads_per_sm = attr(kMaxThreadsPerMultiprocessor);
        p.warp_size = attr(kWarpSize);
        p.max_warps_per_sm = p.warp_size > 0 ? p.max_threads_per_sm / p.warp_size : 0;
        p.max_blocks_per_sm = attr(kMaxBlocksPerMultiprocessor);
        // The per-block default (48 KiB) is what Halide 14 can use; see GpuProfile.
        p.shared_mem_per_block_bytes = attr(kMaxSharedMemoryPerBlock);
        p.shared_mem_per_sm_bytes = attr(kMaxSharedMemoryPerMultiprocessor);
        p.registers_per_sm = attr(kMaxRegistersPerMultiprocessor);
        p.l2_cache_bytes = attr(kL2CacheSize);
        // Peak DRAM bandwidth = 2 (DDR) * clock * bus width.
        p.memory_bandwidth_gb_per_s =
            2.0 * attr(kMemoryClockRate) * 1e3 * (attr(kGlobalMemoryBusWidth) / 8.0) / 1e9;
        p.source = "CUDA driver API on this machine";
        q.devices.push_back(p);
    }
    if (q.devices.empty()) q.problem = "the CUDA driver reports no usable GPU";
    return q;
}

} // namespace gpusched
