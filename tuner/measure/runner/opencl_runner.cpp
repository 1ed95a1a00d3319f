// The opencl device (runner.h): the benchmark harness on POCL, the CPU's
// OpenCL. One benchmark at a time; its times are stored under pocl-<cpu>.

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "common/errors.h"
#include "tuner/measure/runner/cache_flush_size.h"
#include "tuner/measure/runner/runner.h"
#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched {
namespace {

class OpenClRunner : public Runner {
public:
    // POCL's caches are the host CPU's: the flush covers its last-level cache.
    explicit OpenClRunner(const TimingOptions &timing)
        : timing_(resolve_flush_bytes(timing, host_last_level_cache_bytes())), device_(pocl_device_name()) {}

    DeviceKind kind() const override { return DeviceKind::OpenCl; }
    std::string device_name() const override { return device_; }
    // POCL runs a kernel on every core: one benchmark at a time, alone.
    int slots() const override { return 1; }
    bool compiles_may_overlap() const override { return false; }

    Measurement run(const BenchmarkBinary &binary) override { return run_many({binary}, {}).front(); }

    std::vector<Measurement> run_many(const std::vector<BenchmarkBinary> &binaries,
                                      const MeasuredFn &on_measured) override {
        if (binaries.empty()) return {};
        std::lock_guard<std::mutex> lock(mutex_);
        std::map<std::string, std::string> env;
        // POCL caches compiled kernels under $HOME by default; keep them with
        // the group's first benchmark. Its kernel compiler runs in the first
        // call, which is not timed; the work-group method stays POCL's (or
        // the user's).
        env["POCL_CACHE_DIR"] = binaries.front().work_dir + "/pocl-cache";
        auto stamp = [&](Measurement &m) {
            m.device_kind = DeviceKind::OpenCl;
            m.device = device_;
        };
        std::vector<Measurement> ms =
            detail::run_benchmark_group(binaries, timing_, env, [&](std::size_t i, const Measurement &m) {
                if (!on_measured) return;
                Measurement stamped = m;
                stamp(stamped);
                on_measured(i, stamped);
            });
        for (Measurement &m : ms)
            stamp(m);
        return ms;
    }

private:
    TimingOptions timing_;
    std::string device_;
    std::mutex mutex_;
};

} // namespace

std::string pocl_device_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        auto colon = line.find(':');
        if (colon == std::string::npos) break;
        std::string model = line.substr(colon + 1);
        const auto b = model.find_first_not_of(" \t");
        const auto e = model.find_last_not_of(" \t");
        if (b == std::string::npos) break;
        return "pocl-" + model.substr(b, e - b + 1);
    }
    return "pocl-unknown-cpu";
}

std::unique_ptr<Runner> make_opencl_runner(const TimingOptions &timing) {
    if (!opencl_runtime_present())
        throw UnavailableError("--device opencl needs an OpenCL runtime and there is none here "
                               "(install pocl-opencl-icd and ocl-icd-libopencl1)");
    if (std::string problem = opencl_environment_problem(std::chrono::seconds(120)); !problem.empty())
        throw UnavailableError("--device opencl: " + problem);
    return std::make_unique<OpenClRunner>(timing);
}

} // namespace gpusched
