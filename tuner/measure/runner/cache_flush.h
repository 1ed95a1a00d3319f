#pragma once
// The cache flush before every timed call of the benchmark harness
// (benchmark_main.cpp; issue 56). Without it, call N+1 reads the inputs
// call N just left in the cache, and a pipeline whose working set fits
// (an H100's L2 holds 50 MB) is timed as if its inputs came from cache,
// which no caller of a single call sees.
// nvbench and Triton's do_bench flush the same way: write a buffer larger
// than the cache between calls, outside the timed interval.
//
// What is written: --flush-bytes, which the driver sets to twice the
// device's last-level cache (cache_flush_size.h: the GPU profile's L2 for
// CUDA, the CPU's last-level cache for POCL). On CUDA a device buffer of
// that size, set with cuMemsetD32 and synchronized; on OpenCL (POCL: the
// device's caches are the host's) and CPU builds a host buffer, every
// cache line of it read and written. 0 turns the flush off.
//
// Limit: on POCL the flush runs on the harness's thread, so it empties that
// core's caches and the last-level cache it shares; POCL's worker threads on
// other cores (other L3 slices of a chiplet CPU) may keep some of their lines
// in their private caches. POCL's times are a CPU's, for machines without a
// GPU; the flush matters most on the GPU, whose L2 every SM shares.
//
// Invariant: the flush completes before flush() returns, so none of it is
// inside the timed interval, whatever the timer (device_timer.h).

#include <cstdint>
#include <memory>
#include <string>

namespace gpusched::harness {

class CacheFlush {
public:
    virtual ~CacheFlush() = default;
    // Bytes written by each flush(): what benchmark.json's "flush_bytes"
    // records (0: none).
    virtual int64_t bytes() const = 0;
    virtual void flush() = 0;
};

// The flush of `bytes` for the harness's device ("cuda", "opencl" or
// "none"), made after the first call (the CUDA context exists by then). On
// CUDA, where the device buffer cannot be had, a flush of 0 bytes (a host
// buffer would leave the GPU's L2 as it was), and *why_not says why.
std::unique_ptr<CacheFlush> make_cache_flush(const std::string &device, int64_t bytes, std::string *why_not);

} // namespace gpusched::harness
