#include "tuner/generate/ptxas_report.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "tuner/subprocess.h"

namespace gpusched {

const char *to_string(PtxasStatus s) {
    switch (s) {
    case PtxasStatus::Checked:
        return "checked";
    case PtxasStatus::NotChecked:
        return "not checked";
    case PtxasStatus::Failed:
        return "failed";
    }
    return "?";
}

bool PtxasReport::any_spills() const {
    for (const auto &k : kernels)
        if (k.spills()) return true;
    return false;
}

long PtxasReport::total_spill_bytes() const {
    long total = 0;
    for (const auto &k : kernels)
        total += k.spill_store_bytes + k.spill_load_bytes;
    return total;
}

std::vector<KernelResources> parse_ptxas_verbose(const std::string &text) {
    static const std::regex compiling(R"(Compiling entry function '([^']+)')");
    static const std::regex properties(R"(Function properties for (\S+))");
    static const std::regex frame(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    static const std::regex used(R"(Used (\d+) registers)");
    static const std::regex barriers(R"(used (\d+) barriers)");
    static const std::regex smem(R"((\d+) bytes smem)");

    std::vector<KernelResources> kernels;
    auto current = [&](const std::string &name) -> KernelResources & {
        if (kernels.empty() || kernels.back().name != name) {
            kernels.push_back({});
            kernels.back().name = name;
        }
        return kernels.back();
    };
    std::istringstream in(text);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, compiling)) {
            current(m[1]);
        } else if (std::regex_search(line, m, properties)) {
            current(m[1]);
        } else if (kernels.empty()) {
            continue;
        } else if (std::regex_search(line, m, frame)) {
            auto &k = kernels.back();
            k.stack_frame_bytes = std::stol(m[1]);
            k.spill_store_bytes = std::stol(m[2]);
            k.spill_load_bytes = std::stol(m[3]);
        } else if (std::regex_search(line, m, used)) {
            auto &k = kernels.back();
            k.registers = std::stoi(m[1]);
            if (std::regex_search(line, m, barriers)) k.barriers = std::stoi(m[1]);
            if (std::regex_search(line, m, smem)) k.static_shared_bytes = std::stol(m[1]);
        }
    }
    return kernels;
}

std::optional<std::string> find_ptxas() {
    if (const char *env = std::getenv("GPUSCHED_PTXAS"); env && *env) {
        return find_executable(env);
    }
    return find_executable("ptxas", {"/usr/local/cuda/bin"});
}

PtxasReport check_with_ptxas(const std::vector<std::string> &ptx_modules, const std::string &arch,
                             const std::string &scratch_dir) {
    PtxasReport report;
    report.arch = arch;
    if (ptx_modules.empty()) {
        report.status = PtxasStatus::NotChecked;
        report.detail = "no CUDA kernels in the compiled library";
        return report;
    }
    auto ptxas = find_ptxas();
    if (!ptxas) {
        report.status = PtxasStatus::NotChecked;
        report.detail = "ptxas not found (set GPUSCHED_PTXAS or put the CUDA toolkit's bin/ in PATH)";
        return report;
    }
    for (std::size_t i = 0; i < ptx_modules.size(); ++i) {
        std::string path = scratch_dir + "/module" + std::to_string(i) + ".ptx";
        {
            std::ofstream f(path);
            f << ptx_modules[i];
            if (!f) {
                report.status = PtxasStatus::Failed;
                report.detail = "cannot write " + path;
                return report;
            }
        }
        ProcessSpec spec;
        spec.argv = {*ptxas, "-v", "-arch=" + arch, path, "-o", "/dev/null"};
        spec.timeout = std::chrono::seconds(120);
        ProcessResult r = run_process(spec);
        if (!r.ok()) {
            const std::string why = last_lines(r.err, 1);
            // ptxas knows only the architectures of its own toolkit; CUDA 13
            // dropped sm_70 (V100).
            if (why.find("is not defined for option 'gpu-name'") != std::string::npos) {
                report.status = PtxasStatus::NotChecked;
                report.detail = "this ptxas does not support " + arch + " (" + why + ")";
            } else {
                report.status = PtxasStatus::Failed;
                report.detail = "ptxas " + r.describe_failure() + ": " + why;
            }
            return report;
        }
        auto kernels = parse_ptxas_verbose(r.err);
        report.kernels.insert(report.kernels.end(), kernels.begin(), kernels.end());
    }
    report.status = PtxasStatus::Checked;
    return report;
}

} // namespace gpusched
