#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/gpu_profile.h"

using namespace gpusched;

TEST_CASE("built-in profiles obey the hardware invariants", "[gpu]") {
    REQUIRE(builtin_gpu_profiles().size() >= 4);
    for (const auto &p : builtin_gpu_profiles()) {
        INFO(p.name);
        CHECK(p.sm_count > 0);
        CHECK(p.max_warps_per_sm * p.warp_size == p.max_threads_per_sm);
        CHECK(p.shared_mem_per_block_bytes == 48 * 1024);  // Halide 14 never opts in to more
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
    GpuProfile back = gpu_profile_from_json(to_json(h));
    CHECK(back.name == "h200");
    CHECK(back.memory_bandwidth_gb_per_s == h.memory_bandwidth_gb_per_s);
    nlohmann::json j = to_json(h);
    j.erase("sm_count");
    CHECK_THROWS_WITH(gpu_profile_from_json(j), Catch::Contains("sm_count"));
    j = to_json(h);
    j["shared_mem_per_block_bytes"] = 1 << 30;
    CHECK_THROWS_WITH(gpu_profile_from_json(j), Catch::Contains("shared_mem_per_block_bytes"));
}
