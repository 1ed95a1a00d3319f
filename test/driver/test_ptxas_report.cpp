#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/generate/ptxas_report.h"

using namespace gpusched;

namespace {
std::string fixture(const std::string &name) {
    return test::read_file(std::string(GPUSCHED_TEST_DATA_DIR) + "/" + name);
}
} // namespace

// The fixtures are real `ptxas -v -arch=sm_90` output (CUDA 13.0) on PTX
// Halide 14 generated; see test/data/README.md.
TEST_CASE("ptxas output of a Li2018 schedule yields one row per kernel", "[ptxas]") {
    auto kernels = parse_ptxas_verbose(fixture("ptxas_li2018_blur.txt"));
    REQUIRE(kernels.size() == 3);
    CHECK(kernels[0].name == "_kernel_output_s0_x_v0_v0___block_id_x");
    CHECK(kernels[0].registers == 17);
    CHECK(kernels[2].registers == 16);
    for (const auto &k : kernels)
        CHECK_FALSE(k.spills());
}

TEST_CASE("ptxas output with spills records spill stores, loads and stack", "[ptxas]") {
    auto kernels = parse_ptxas_verbose(fixture("ptxas_spill.txt"));
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].registers == 24);
    CHECK(kernels[0].spill_store_bytes == 48);
    CHECK(kernels[0].spill_load_bytes == 48);
    CHECK(kernels[0].stack_frame_bytes == 48);
    CHECK(kernels[0].barriers == 1);
    CHECK(kernels[0].spills());
}

TEST_CASE("ptxas output with static shared memory records it", "[ptxas]") {
    auto kernels = parse_ptxas_verbose(fixture("ptxas_smem.txt"));
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].name == "tile_copy");
    CHECK(kernels[0].static_shared_bytes == 4096);
    CHECK(kernels[0].registers == 10);
}

TEST_CASE("ptxas assembles real PTX and reports its kernel", "[ptxas]") {
    REQUIRE(find_ptxas().has_value()); // the CUDA toolkit is part of the build machines
    test::TempDir dir;
    PtxasReport r = check_with_ptxas({fixture("static_shared.ptx")}, "sm_90", dir.path());
    CHECK(r.status == PtxasStatus::Checked);
    REQUIRE(r.kernels.size() == 1);
    CHECK(r.kernels[0].static_shared_bytes == 4096);
}

TEST_CASE("an architecture ptxas does not know is 'not checked', with the reason", "[ptxas]") {
    REQUIRE(find_ptxas().has_value());
    test::TempDir dir;
    // No toolkit knows sm_9999 (the case in practice: CUDA 13's ptxas dropped
    // sm_70, the V100 profile's architecture).
    PtxasReport r = check_with_ptxas({fixture("static_shared.ptx")}, "sm_9999", dir.path());
    INFO(r.detail);
    CHECK(r.status == PtxasStatus::NotChecked);
    CHECK(r.detail.find("does not support sm_9999") != std::string::npos);
    CHECK(r.detail.find("is not defined for option 'gpu-name'") != std::string::npos);
    CHECK(r.kernels.empty());
}

TEST_CASE("PTX that ptxas rejects is a failure with ptxas' message", "[ptxas]") {
    test::TempDir dir;
    PtxasReport r = check_with_ptxas({".version 7.1\n.target sm_86\n.address_size 64\nthis is not ptx\n"},
                                     "sm_90", dir.path());
    CHECK(r.status == PtxasStatus::Failed);
    CHECK_FALSE(r.detail.empty());
}

TEST_CASE("a missing ptxas means 'not checked', never an error", "[ptxas]") {
    test::TempDir dir;
    setenv("GPUSCHED_PTXAS", "/nonexistent/ptxas", 1);
    PtxasReport r = check_with_ptxas({fixture("static_shared.ptx")}, "sm_90", dir.path());
    unsetenv("GPUSCHED_PTXAS");
    CHECK(r.status == PtxasStatus::NotChecked);
    CHECK(r.detail.find("ptxas not found") != std::string::npos);
}
