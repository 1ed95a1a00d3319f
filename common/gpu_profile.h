#pragma once
// A GPU profile: the hardware limits and rates the search prunes with, the
// cost model's analytic terms use, and the driver picks the Halide target and
// ptxas architecture from. It comes from a built-in table (--gpu h100, ...)
// or from the local device (tuner/cuda_device_query.h).
//
// Invariants: every count is > 0; shared_mem_per_block_bytes <=
// shared_mem_per_sm_bytes; halide_cuda_capability <= 86 (Halide 14's highest).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpusched {

struct GpuProfile {
    std::string name;           // short id: "h100", or "local:<device name>"
    std::string description;    // marketing name and variant
    int compute_capability = 0; // 90 for sm_90
    int sm_count = 0;
    int max_threads_per_block = 0;
    int max_threads_per_sm = 0;
    int max_warps_per_sm = 0;
    int max_blocks_per_sm = 0;
    int warp_size = 32;
    // Halide 14's CUDA runtime launches with dynamic shared memory and never
    // opts in beyond the default, so a block gets at most 48 KiB whatever the
    // SM has (see DESIGN.md).
    long shared_mem_per_block_bytes = 48 * 1024;
    long shared_mem_per_sm_bytes = 0;
    int registers_per_sm = 0;
    int max_registers_per_thread = 255;
    long l2_cache_bytes = 0;
    double memory_bandwidth_gb_per_s = 0; // DRAM, peak
    double fp32_tflops = 0;               // peak, non-tensor
    int shared_mem_banks = 32;
    std::string source; // where the numbers come from

    // The Halide target feature string for this GPU ("cuda_capability_86").
    std::string halide_cuda_capability_feature() const;
    // The capability Halide emits PTX for: min(compute_capability, 86).
    int halide_cuda_capability() const;
    // ptxas -arch value ("sm_90").
    std::string ptxas_arch() const;
};

// The built-in profiles, in a stable order.
const std::vector<GpuProfile> &builtin_gpu_profiles();

// Case-insensitive lookup of a built-in profile; nullopt if unknown.
std::optional<GpuProfile> find_builtin_gpu_profile(const std::string &name);

// Names of the built-in profiles, comma separated (for error messages).
std::string builtin_gpu_profile_names();

nlohmann::json to_json(const GpuProfile &p);
// Throws std::runtime_error naming the missing or bad field.
GpuProfile gpu_profile_from_json(const nlohmann::json &j);

} // namespace gpusched
