#include "tuner/host_target.h"

#include <fstream>
#include <sstream>

namespace gpusched {

namespace {

// One Halide feature and the /proc/cpuinfo flags it needs. Halide 14
// (CodeGen_X86::mcpu) compiles for an LLVM CPU model chosen by the highest
// feature: penryn (sse41), corei7-avx (avx), haswell (avx2), knl,
// skylake-avx512, cannonlake, sapphirerapids. LLVM may use anything that
// model has, so a feature needs the flags of its model's ISA that code
// generation can emit, not only the ones Halide names. `after` is the
// feature this one builds on: a CPU lacking that one gets neither.
struct FeatureRule {
    const char *feature;
    const char *after; // nullptr: none
    std::vector<const char *> flags;
};

const std::vector<FeatureRule> &feature_rules() {
    static const std::vector<FeatureRule> rules = {
        {"sse41", nullptr, {"ssse3", "sse4_1"}},
        {"avx", "sse41", {"avx", "sse4_2", "popcnt", "pclmulqdq"}},
        // Halide adds fma and f16c on their own; haswell has both, so avx2
        // needs them as well as the scalar bit-manipulation haswell brings.
        {"avx2", "avx", {"avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"}},
        {"fma", "avx", {"fma"}},
        {"f16c", "avx", {"f16c"}},
        {"avx512", "avx2", {"avx512f", "avx512cd"}},
        {"avx512_knl", "avx512", {"avx512er", "avx512pf"}},
        {"avx512_skylake", "avx512", {"avx512vl", "avx512bw", "avx512dq"}},
        {"avx512_cannonlake", "avx512_skylake", {"avx512ifma", "avx512vbmi"}},
        // The one Halide 14 gets wrong: it asks only for VNNI and BF16, but
        // LLVM's sapphirerapids model also emits AVX512-FP16 (vmovw ...) and
        // Halide itself emits AMX tile instructions for matrix products.
        {"avx512_sapphirerapids",
         "avx512_cannonlake",
         {"avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "avx512_vbmi2", "avx512_bitalg",
          "avx512_vpopcntdq", "amx_tile", "amx_int8", "amx_bf16"}},
    };
    return rules;
}

std::string read_file_text(const char *path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

CpuFlags parse_cpuinfo_flags(const std::string &cpuinfo_text) {
    std::istringstream lines(cpuinfo_text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t'))
            key.pop_back();
        if (key != "flags") continue;
        CpuFlags flags;
        std::istringstream words(line.substr(colon + 1));
        for (std::string w; words >> w;)
            flags.insert(w);
        return flags;
    }
    return {};
}

std::vector<std::string> halide_x86_features(const CpuFlags &flags) {
    std::vector<std::string> features;
    std::set<std::string> on;
    for (const FeatureRule &rule : feature_rules()) {
        if (rule.after && !on.count(rule.after)) continue;
        bool all = true;
        for (const char *f : rule.flags)
            all = all && flags.count(f);
        if (!all) continue;
        on.insert(rule.feature);
        features.emplace_back(rule.feature);
    }
    return features;
}

std::string x86_64_linux_target(const CpuFlags &flags) {
    std::string target = "x86-64-linux";
    for (const std::string &f : halide_x86_features(flags))
        target += "-" + f;
    return target;
}

const std::string &host_cpu_target() {
    static const std::string target = [] {
#if defined(__linux__) && defined(__x86_64__)
        const CpuFlags flags = parse_cpuinfo_flags(read_file_text("/proc/cpuinfo"));
        if (!flags.empty()) return x86_64_linux_target(flags);
#endif
        return std::string("host");
    }();
    return target;
}

std::string host_target_with(const std::string &features) {
    return features.empty() ? host_cpu_target() : host_cpu_target() + "-" + features;
}

} // namespace gpusched
