#include "common/gpu_profile.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpusched {
namespace {

// Halide 14 knows cuda_capability_{30,32,35,50,61,70,75,80,86}; newer GPUs run
// its sm_86 PTX through the driver's JIT.
constexpr int kHalide14MaxCudaCapability = 86;

std::vector<GpuProfile> make_builtin_profiles() {
    std::vector<GpuProfile> v;
    {
        // NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), table 3
        // (H100 SXM5) and CUDA C Programming Guide, table "Technical
        // Specifications per Compute Capability" (9.0).
        GpuProfile p;
        p.name = "h100";
        p.description = "NVIDIA H100 SXM5 80GB";
        p.compute_capability = 90;
        p.sm_count = 132;
        p.max_threads_per_block = 1024;
        p.max_threads_per_sm = 2048;
        p.max_warps_per_sm = 64;
        p.max_blocks_per_sm = 32;
        p.shared_mem_per_sm_bytes = 228 * 1024;
        p.registers_per_sm = 65536;
        p.l2_cache_bytes = 50L * 1024 * 1024;
        p.memory_bandwidth_gb_per_s = 3350;
        p.fp32_tflops = 67;
        p.source = "H100 whitepaper table 3; CUDA programming guide CC 9.0";
        v.push_back(p);
    }
    {
        // H200 SXM: same GH100 die as H100 SXM5 (132 SMs), HBM3e 141 GB at
        // 4.8 TB/s (NVIDIA H200 datasheet, 2024).
        GpuProfile p = v.back();
        p.name = "h200";
        p.description = "NVIDIA H200 SXM 141GB";
        p.memory_bandwidth_gb_per_s = 4800;
        p.source = "NVIDIA H200 datasheet (2024); CUDA programming guide CC 9.0";
        v.push_back(p);
    }
    {
        // NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), table 3
        // (A100 SXM4 40GB); CUDA programming guide CC 8.0.
        GpuProfile p;
        p.name = "a100";
        p.description = "NVIDIA A100 SXM4 40GB";
        p.compute_capability = 80;
        p.sm_count = 108;
        p.max_threads_per_block = 1024;
        p.max_threads_per_sm = 2048;
        p.max_warps_per_sm = 64;
        p.max_blocks_per_sm = 32;
        p.shared_mem_per_sm_bytes = 164 * 1024;
        p.registers_per_sm = 65536;
        p.l2_cache_bytes = 40L * 1024 * 1024;
        p.memory_bandwidth_gb_per_s = 1555;
        p.fp32_tflops = 19.5;
        p.source = "A100 whitepaper table 3; CUDA programming guide CC 8.0";
        v.push_back(p);
    }
    {
        // NVIDIA Tesla V100 GPU Architecture whitepaper (2017), table 1
        // (V100 SXM2); CUDA programming guide CC 7.0. The paper's GPU.
        GpuProfile p;
        p.name = "v100";
        p.description = "NVIDIA Tesla V100 SXM2 32GB";
        p.compute_capability = 70;
        p.sm_count = 80;
        p.max_threads_per_block = 1024;
        p.max_threads_per_sm = 2048;
        p.max_warps_per_sm = 64;
        p.max_blocks_per_sm = 32;
        p.shared_mem_per_sm_bytes = 96 * 1024;
        p.registers_per_sm = 65536;
        p.l2_cache_bytes = 6L * 1024 * 1024;
        p.memory_bandwidth_gb_per_s = 900;
        p.fp32_tflops = 15.7;
        p.source = "V100 whitepaper table 1; CUDA programming guide CC 7.0";
        v.push_back(p);
    }
    return v;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

} // namespace

int GpuProfile::halide_cuda_capability() const {
    // Halide's feature list is sparse; pick the highest one not above the GPU.
    static const int known[] = {30, 32, 35, 50, 61, 70, 75, 80, 86};
    int best = 30;
    for (int k : known) {
        if (k <= compute_capability && k <= kHalide14MaxCudaCapability) best = k;
    }
    return best;
}

std::string GpuProfile::halide_cuda_capability_feature() const {
    return "cuda_capability_" + std::to_string(halide_cuda_capability());
}

std::string GpuProfile::ptxas_arch() const {
    return "sm_" + std::to_string(compute_capability);
}

const std::vector<GpuProfile> &builtin_gpu_profiles() {
    static const std::vector<GpuProfile> profiles = make_builtin_profiles();
    return profiles;
}

std::optional<GpuProfile> find_builtin_gpu_profile(const std::string &name) {
    const std::string key = lower(name);
    for (const auto &p : builtin_gpu_profiles()) {
        if (p.name == key) return p;
    }
    return std::nullopt;
}

std::string builtin_gpu_profile_names() {
    std::string out;
    for (const auto &p : builtin_gpu_profiles()) {
        if (!out.empty()) out += ", ";
        out += p.name;
    }
    return out;
}

nlohmann::json to_json(const GpuProfile &p) {
    return nlohmann::json{
        {"name", p.name},
        {"description", p.description},
        {"compute_capability", p.compute_capability},
        {"sm_count", p.sm_count},
        {"max_threads_per_block", p.max_threads_per_block},
        {"max_threads_per_sm", p.max_threads_per_sm},
        {"max_warps_per_sm", p.max_warps_per_sm},
        {"max_blocks_per_sm", p.max_blocks_per_sm},
        {"warp_size", p.warp_size},
        {"shared_mem_per_block_bytes", p.shared_mem_per_block_bytes},
        {"shared_mem_per_sm_bytes", p.shared_mem_per_sm_bytes},
        {"registers_per_sm", p.registers_per_sm},
        {"max_registers_per_thread", p.max_registers_per_thread},
        {"l2_cache_bytes", p.l2_cache_bytes},
        {"memory_bandwidth_gb_per_s", p.memory_bandwidth_gb_per_s},
        {"fp32_tflops", p.fp32_tflops},
        {"shared_mem_banks", p.shared_mem_banks},
        {"source", p.source},
    };
}

namespace {
template <typename T>
void read_field(const nlohmann::json &j, const char *key, T &out, bool required = true) {
    auto it = j.find(key);
    if (it == j.end()) {
        if (required) throw std::runtime_error(std::string("GPU profile is missing field '") + key + "'");
        return;
    }
    try {
        out = it->get<T>();
    } catch (const nlohmann::json::exception &) {
        throw std::runtime_error(std::string("GPU profile field '") + key + "' has the wrong type");
    }
}
} // namespace

GpuProfile gpu_profile_from_json(const nlohmann::json &j) {
    if (!j.is_object()) throw std::runtime_error("GPU profile must be a JSON object");
    GpuProfile p;
    read_field(j, "name", p.name);
    read_field(j, "description", p.description, false);
    read_field(j, "compute_capability", p.compute_capability);
    read_field(j, "sm_count", p.sm_count);
    read_field(j, "max_threads_per_block", p.max_threads_per_block);
    read_field(j, "max_threads_per_sm", p.max_threads_per_sm);
    read_field(j, "max_warps_per_sm", p.max_warps_per_sm);
    read_field(j, "max_blocks_per_sm", p.max_blocks_per_sm);
    read_field(j, "warp_size", p.warp_size, false);
    read_field(j, "shared_mem_per_block_bytes", p.shared_mem_per_block_bytes);
    read_field(j, "shared_mem_per_sm_bytes", p.shared_mem_per_sm_bytes);
    read_field(j, "registers_per_sm", p.registers_per_sm);
    read_field(j, "max_registers_per_thread", p.max_registers_per_thread, false);
    read_field(j, "l2_cache_bytes", p.l2_cache_bytes);
    read_field(j, "memory_bandwidth_gb_per_s", p.memory_bandwidth_gb_per_s);
    read_field(j, "fp32_tflops", p.fp32_tflops, false);
    read_field(j, "shared_mem_banks", p.shared_mem_banks, false);
    read_field(j, "source", p.source, false);
    auto positive = [&](long v, const char *what) {
        if (v <= 0) throw std::runtime_error(std::string("GPU profile field '") + what + "' must be > 0");
    };
    positive(p.compute_capability, "compute_capability");
    positive(p.sm_count, "sm_count");
    positive(p.max_threads_per_block, "max_threads_per_block");
    positive(p.max_threads_per_sm, "max_threads_per_sm");
    positive(p.max_warps_per_sm, "max_warps_per_sm");
    positive(p.max_blocks_per_sm, "max_blocks_per_sm");
    positive(p.warp_size, "warp_size");
    positive(p.shared_mem_per_block_bytes, "shared_mem_per_block_bytes");
    positive(p.shared_mem_per_sm_bytes, "shared_mem_per_sm_bytes");
    positive(p.registers_per_sm, "registers_per_sm");
    if (p.shared_mem_per_block_bytes > p.shared_mem_per_sm_bytes)
        throw std::runtime_error("GPU profile: shared_mem_per_block_bytes exceeds shared_mem_per_sm_bytes");
    return p;
}

} // namespace gpusched
