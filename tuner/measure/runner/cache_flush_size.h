#pragma once
// How many bytes the benchmark harness writes before each timed call
// (--flush-bytes; what is written and why: cache_flush.h). The driver side
// of the flush: the runner that knows the device sets the size, the harness
// only writes it.
//
// The rule (issue 56): twice the device's last-level cache. A buffer just
// the cache's size can leave some of the previous call's lines behind where
// the replacement policy is not strict LRU (GPU L2s and most CPU L3s are
// not), twice leaves a margin; nvbench writes the L2's size, Triton's
// do_bench a fixed 256 MB. The cache is the GPU's L2 for cuda (GpuProfile,
// from the driver on the machine that benchmarks), and for POCL the CPU's
// last-level cache as cpu0 sees it. Where the size is unknown,
// kFallbackFlushBytes.

#include <cstdint>
#include <string>

namespace gpusched {

// What a flush writes where the cache's size is unknown: twice 32 MiB, a
// large desktop or server L3 slice, more than any NVIDIA L2 before Hopper
// (A100: 40 MB; H100: 50 MB, whose profile gives its size anyway).
constexpr int64_t kFallbackFlushBytes = int64_t{64} << 20;

// Twice last_level_cache_bytes; kFallbackFlushBytes when that is 0 or less.
int64_t flush_bytes_for_cache(int64_t last_level_cache_bytes);

// The host CPU's last-level cache in bytes, 0 if unknown: the highest-level
// data or unified cache in cpu0's sysfs cache folder, else
// sysconf(_SC_LEVEL3_CACHE_SIZE). The sysfs figure comes first because it is
// the cache one core shares: on an AMD EPYC sysconf reports the socket's
// whole L3 (256 MiB), of which a core's complex shares 32 MiB.
int64_t host_last_level_cache_bytes();

// The same from a folder laid out like /sys/devices/system/cpu/cpu0/cache
// (index*/level, type, size as "32768K"); 0 if none is readable.
int64_t last_level_cache_from_sysfs(const std::string &cache_dir);

} // namespace gpusched
