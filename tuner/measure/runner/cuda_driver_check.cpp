#include "tuner/measure/runner/cuda_driver_check.h"

#include <cstdlib>
#include <exception>
#include <regex>

#include "tuner/cuda_device_query.h"
#include "tuner/generate/ptx_extract.h"

namespace gpusched {

int cuda_driver_for_ptx_isa(const std::string &v) {
    const auto dot = v.find('.');
    if (dot == std::string::npos) return 0;
    const int major = std::atoi(v.substr(0, dot).c_str()), minor = std::atoi(v.substr(dot + 1).c_str());
    // PTX ISA release notes: 6.0 came with CUDA 9.0, ..., 6.5 with 10.2,
    // 7.0 with 11.0, 7.x with 11.x, 8.0 with 12.0, 8.x with 12.x.
    if (major == 6) {
        static const int kCuda[] = {9000, 9010, 9020, 10000, 10010, 10020};
        return minor >= 0 && minor <= 5 ? kCuda[minor] : 0;
    }
    if (major == 7 || major == 8) return (major == 7 ? 11000 : 12000) + 10 * minor;
    return 0;
}

std::string ptx_isa_version(const std::string &library) {
    try {
        static const std::regex version(R"(\.version\s+(\d+\.\d+))");
        for (const auto &m : extract_ptx_modules_from_file(library)) {
            std::smatch match;
            if (std::regex_search(m.text, match, version)) return match[1];
        }
    } catch (const std::exception &) {
    }
    return {};
}

std::string cuda_driver_problem_for(const std::string &library) {
    const std::string isa = ptx_isa_version(library);
    const int need = cuda_driver_for_ptx_isa(isa);
    const int have = query_local_gpus().driver_version;
    if (need <= 0 || have <= 0 || have >= need) return {};
    return "the CUDA driver (" + std::to_string(have / 1000) + "." + std::to_string(have % 1000 / 10) +
           ") is too old for PTX ISA " + isa + " (needs CUDA " + std::to_string(need / 1000) + "." +
           std::to_string(need % 1000 / 10) + " or newer); update the NVIDIA driver";
}

} // namespace gpusched
