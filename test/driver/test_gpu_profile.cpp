#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"

using namespace gpusched;

TEST_CASE("built-in profiles obey the hardware invariants", "[gpu]") {
    REQUIRE(builtin_gpu_profiles().size() >= 4);
    for (const auto &p : builtin_gpu_profiles()) {
        INFO(p.name);
        CHECK(p.sm_count > 0);
        CHECK(p.max_warps_per_sm * p.warp_size == p.max_threads_per_sm);
        CHECK(p.shared_mem_per_block_bytes == 48 * 1024); // Halide 14 never opts in to more
        CHECK(p.shared_mem_per_block_bytes <= p.shared_mem_per_sm_bytes);
        CHECK(p.halide_cuda_capability() <= 86);
        CHECK_FALSE(p.source.empty());
    }
}

TEST_CASE("the Halide CUDA capability never exceeds the GPU's or Halide 14's", "[gpu]") {
    CHECK(find_builtin_gpu_profile("h100")->halide_cuda_capability_feature() == "cuda_capability_86");
    CHECK(find_builtin_gpu_profile("A100")->halide_cuda_capability_feature() == "cuda_capability_80");
    CHECK(find_builtin_gpu_profile("v100")->halide_cuda_capability_feature() == "cuda_capability_70");
    CHECK(find_builtin_gpu_profile("h100")->ptxas_arch() == "sm_90");
    CHECK_FALSE(find_builtin_gpu_profile("b200").has_value());
}

TEST_CASE("a profile survives a JSON round trip, and bad JSON names the field", "[gpu]") {
    GpuProfile h = *find_builtin_gpu_profile("h200");
    // Fields a reader could default are given values other than their defaults.
    h.warp_size = 64;
    h.shared_mem_per_block_bytes = 32 * 1024;
    h.max_registers_per_thread = 128;
    h.fp32_tflops = 12.5;
    h.shared_mem_banks = 16;
    h.description = "a profile for the round trip";
    h.source = "test_gpu_profile.cpp";
    const GpuProfile d{};
    REQUIRE(h.warp_size != d.warp_size);
    REQUIRE(h.shared_mem_per_block_bytes != d.shared_mem_per_block_bytes);
    REQUIRE(h.max_registers_per_thread != d.max_registers_per_thread);
    REQUIRE(h.shared_mem_banks != d.shared_mem_banks);
    GpuProfile back = gpu_profile_from_json(to_json(h));
    CHECK(back.name == h.name);
    CHECK(back.description == h.description);
    CHECK(back.compute_capability == h.compute_capability);
    CHECK(back.sm_count == h.sm_count);
    CHECK(back.max_threads_per_block == h.max_threads_per_block);
    CHECK(back.max_threads_per_sm == h.max_threads_per_sm);
    CHECK(back.max_warps_per_sm == h.max_warps_per_sm);
    CHECK(back.max_blocks_per_sm == h.max_blocks_per_sm);
    CHECK(back.warp_size == h.warp_size);
    CHECK(back.shared_mem_per_block_bytes == h.shared_mem_per_block_bytes);
    CHECK(back.shared_mem_per_sm_bytes == h.shared_mem_per_sm_bytes);
    CHECK(back.registers_per_sm == h.registers_per_sm);
    CHECK(back.max_registers_per_thread == h.max_registers_per_thread);
    CHECK(back.l2_cache_bytes == h.l2_cache_bytes);
    CHECK(back.memory_bandwidth_gb_per_s == h.memory_bandwidth_gb_per_s);
    CHECK(back.fp32_tflops == h.fp32_tflops);
    CHECK(back.shared_mem_banks == h.shared_mem_banks);
    CHECK(back.source == h.source);
    // to_json writes the 18 fields compared above and no other.
    CHECK(to_json(h).size() == 18);
    nlohmann::json j = to_json(h);
    j.erase("sm_count");
    CHECK_THROWS_WITH(gpu_profile_from_json(j), Catch::Contains("sm_count"));
    j = to_json(h);
    j["shared_mem_per_block_bytes"] = 1 << 30;
    CHECK_THROWS_WITH(gpu_profile_from_json(j), Catch::Contains("shared_mem_per_block_bytes"));
}
