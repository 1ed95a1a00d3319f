// The Halide target gpusched uses for code that runs on this CPU
// (tuner/host_target.h): only features whose instructions the CPU has.

#include <algorithm>
#include <fstream>
#include <sstream>

#include "test/catch2_compat.h"

#include "tuner/host_target.h"

using namespace gpusched;

namespace {

std::string read_data(const std::string &name) {
    std::ifstream in(std::string(GPUSCHED_TEST_DATA_DIR) + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

CpuFlags flags_of(const std::string &words) {
    CpuFlags f;
    std::istringstream in(words);
    for (std::string w; in >> w;)
        f.insert(w);
    return f;
}

bool has(const std::vector<std::string> &v, const std::string &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// The flags Linux lists for these CPUs, as far as the rules read them.
const char *kHaswellFlags =
    "sse sse2 ssse3 sse4_1 sse4_2 popcnt pclmulqdq avx avx2 fma f16c bmi1 bmi2 abm movbe";
const char *kSkylakeServerFlags =
    "sse sse2 ssse3 sse4_1 sse4_2 popcnt pclmulqdq avx avx2 fma f16c bmi1 bmi2 abm movbe "
    "avx512f avx512cd avx512dq avx512bw avx512vl";
const char *kSapphireRapidsFlags =
    "sse sse2 ssse3 sse4_1 sse4_2 popcnt pclmulqdq avx avx2 fma f16c bmi1 bmi2 abm movbe "
    "avx512f avx512cd avx512dq avx512bw avx512vl avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni "
    "avx512_bitalg avx512_vpopcntdq avx512_bf16 avx512_fp16 avx_vnni amx_tile amx_int8 amx_bf16";

} // namespace

TEST_CASE("the first processor's flags are read from /proc/cpuinfo text", "[host_target]") {
    const CpuFlags flags = parse_cpuinfo_flags(read_data("cpuinfo_epyc_avx512_bf16_no_fp16.txt"));
    CHECK(flags.count("avx512_bf16"));
    CHECK(flags.count("avx512_vnni"));
    CHECK_FALSE(flags.count("avx512_fp16"));
    CHECK(flags.size() > 50); // not the hand-added second processor's three
    CHECK(parse_cpuinfo_flags("processor : 0\nmodel name : x\n").empty());
}

TEST_CASE("a CPU with AVX-512 VNNI and BF16 but no AVX512-FP16 gets no Sapphire Rapids code",
          "[host_target]") {
    // Halide 14's own host detection turns avx512_sapphirerapids on for this
    // CPU, and its builds die with SIGILL on vmovw (AVX512-FP16).
    const CpuFlags flags = parse_cpuinfo_flags(read_data("cpuinfo_epyc_avx512_bf16_no_fp16.txt"));
    REQUIRE(flags.count("avx512_bf16"));
    CHECK(x86_64_linux_target(flags) ==
          "x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake-avx512_cannonlake");
}

TEST_CASE("a Sapphire Rapids CPU keeps its whole AVX-512 feature set", "[host_target]") {
    const auto features = halide_x86_features(flags_of(kSapphireRapidsFlags));
    CHECK(has(features, "avx512_cannonlake"));
    CHECK(has(features, "avx512_sapphirerapids"));
    // Without AMX (Halide emits tile instructions for matrix products) it is
    // no Sapphire Rapids target either.
    CpuFlags no_amx = flags_of(kSapphireRapidsFlags);
    no_amx.erase("amx_tile");
    CHECK_FALSE(has(halide_x86_features(no_amx), "avx512_sapphirerapids"));
}

TEST_CASE("older CPUs get the features they have and none above", "[host_target]") {
    CHECK(x86_64_linux_target(flags_of(kSkylakeServerFlags)) ==
          "x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake");
    CHECK(x86_64_linux_target(flags_of(kHaswellFlags)) == "x86-64-linux-sse41-avx-avx2-fma-f16c");
    CHECK(x86_64_linux_target(flags_of("sse sse2 ssse3 sse4_1")) == "x86-64-linux-sse41");
    CHECK(x86_64_linux_target(flags_of("sse sse2")) == "x86-64-linux");
}

TEST_CASE("a feature is dropped when a lower level it builds on is missing", "[host_target]") {
    // AVX-512 flags without AVX2 (an odd hypervisor mask): LLVM would still
    // compile AVX-512 code as an extension of haswell, so none of it.
    CpuFlags flags = flags_of(kSkylakeServerFlags);
    flags.erase("avx2");
    const auto features = halide_x86_features(flags);
    CHECK(has(features, "avx"));
    CHECK_FALSE(has(features, "avx2"));
    CHECK_FALSE(has(features, "avx512"));
    CHECK_FALSE(has(features, "avx512_skylake"));
}

TEST_CASE("the build's CPU target is the one gpusched computes at run time", "[host_target]") {
    // The configure step ran tuner/tools/print_host_target.cpp; the CPU
    // libraries of this build were compiled for its answer.
    CHECK(host_cpu_target() == GPUSCHED_HOST_TARGET);
    CHECK(host_target_with("opencl") == host_cpu_target() + "-opencl");
    CHECK(host_target_with("") == host_cpu_target());
}
