// `gpusched gpus`: the built-in GPU profiles and the local GPUs, if any.

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tuner/cuda_device_query.h"

namespace gpusched::cli {

namespace {
void print_profile_row(const GpuProfile &p) {
    std::cout << fmt::format(
        "  {:<10} {:<30} sm_{:<3} {:>4} SMs  {:>4} KiB smem/SM  {:>5.0f} GB/s  Halide {}\n", p.name,
        p.description, p.compute_capability, p.sm_count, p.shared_mem_per_sm_bytes / 1024,
        p.memory_bandwidth_gb_per_s, p.halide_cuda_capability_feature());
}
} // namespace

Action add_gpus_command(CLI::App &app, const GlobalOptions &global) {
    CLI::App *cmd = app.add_subcommand("gpus", "List the built-in GPU profiles and the local GPUs");
    (void)cmd;
    return [&global]() {
        LocalGpuQuery local = query_local_gpus();
        if (global.json) {
            nlohmann::json j;
            j["builtin"] = nlohmann::json::array();
            for (const auto &p : builtin_gpu_profiles())
                j["builtin"].push_back(to_json(p));
            j["local"] = nlohmann::json::array();
            for (const auto &p : local.devices)
                j["local"].push_back(to_json(p));
            if (local.devices.empty()) j["local_problem"] = local.problem;
            std::cout << j.dump(2) << "\n";
            return kExitOk;
        }
        std::cout << "Built-in GPU profiles (--gpu NAME):\n";
        for (const auto &p : builtin_gpu_profiles())
            print_profile_row(p);
        std::cout << "\nLocal GPUs (--gpu auto):\n";
        if (local.devices.empty()) std::cout << "  none: " << local.problem << "\n";
        for (const auto &p : local.devices)
            print_profile_row(p);
        return kExitOk;
    };
}

} // namespace gpusched::cli
