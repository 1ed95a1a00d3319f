#pragma once
// What ptxas says about each kernel: registers, spills, stack and static
// shared memory. Spilling is the performance cliff the paper filters on
// (sec. 6.1): it depends on ptxas' register allocation, so it is measured,
// not predicted.
//
// Halide 14 sizes GPU shared memory dynamically at launch, so ptxas reports
// only static shared memory (0 for Halide kernels); the dynamic amount is a
// property of the schedule, not of the PTX.

#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct KernelResources {
    std::string name;
    int registers = 0;
    long spill_store_bytes = 0;
    long spill_load_bytes = 0;
    long stack_frame_bytes = 0;
    long static_shared_bytes = 0;
    int barriers = 0;

    bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
};

// Parses the stderr of `ptxas -v`. Kernels appear in the order ptxas reports
// them. Lines it does not know are ignored.
std::vector<KernelResources> parse_ptxas_verbose(const std::string &ptxas_stderr);

enum class PtxasStatus { Checked, NotChecked, Failed };
const char *to_string(PtxasStatus s);

struct PtxasReport {
    PtxasStatus status = PtxasStatus::NotChecked;
    std::string detail; // why not checked, or the ptxas error
    std::string arch;   // "sm_90"
    std::vector<KernelResources> kernels;

    bool any_spills() const;
    long total_spill_bytes() const;
};

// The ptxas to use: $GPUSCHED_PTXAS, else `ptxas` in PATH, else
// /usr/local/cuda/bin/ptxas. nullopt when none exists.
std::optional<std::string> find_ptxas();

// Assembles each module with `ptxas -v -arch=<arch>` (through run_process,
// with a timeout) and collects its kernels. When ptxas is missing or does not
// know the architecture the report says "not checked" and why; it never throws
// for those.
PtxasReport check_with_ptxas(const std::vector<std::string> &ptx_modules, const std::string &arch,
                             const std::string &scratch_dir);

} // namespace gpusched
