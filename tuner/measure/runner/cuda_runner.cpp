// The cuda device (runner.h): one benchmark per GPU at a time, each told its
// GPU by CUDA_VISIBLE_DEVICES, all GPUs kept busy by the caller's threads.

#include <condition_variable>
#include <mutex>

#include "common/errors.h"
#include "tuner/cuda_device_query.h"
#include "tuner/measure/runner/runner.h"

namespace gpusched {
namespace {

class CudaRunner : public Runner {
public:
    CudaRunner(std::vector<GpuProfile> gpus, const TimingOptions &timing)
        : gpus_(std::move(gpus)), busy_(gpus_.size(), false), timing_(timing) {}

    DeviceKind kind() const override { return DeviceKind::Cuda; }
    std::string device_name() const override { return gpus_.front().description; }
    int slots() const override { return static_cast<int>(gpus_.size()); }
    // No: a sample is timed while nothing else compiles on the host (issue
    // 56): sixteen compilers beside a timed call change its launch latency
    // and the GPU's clocks, and many suite pipelines run in 20-50 us. The
    // round compiles first, then measures.
    bool compiles_may_overlap() const override { return false; }

    Measurement run(const BenchmarkBinary &binary) override { return run_many({binary}, {}).front(); }

    // A group runs on one GPU, in one harness process while no sample ends
    // it: one CUDA context and module loads for all.
    std::vector<Measurement> run_many(const std::vector<BenchmarkBinary> &binaries,
                                      const MeasuredFn &on_measured) override {
        if (binaries.empty()) return {};
        const std::size_t gpu = acquire();
        auto stamp = [&](Measurement &m) {
            m.device_kind = DeviceKind::Cuda;
            m.device = gpus_[gpu].description;
            m.gpu_index = static_cast<int>(gpu);
        };
        std::vector<Measurement> ms;
        try {
            // The flush covers this GPU's L2 (the driver's figure on this machine).
            ms = detail::run_benchmark_group(
                binaries, resolve_flush_bytes(timing_, gpus_[gpu].l2_cache_bytes),
                {{"CUDA_VISIBLE_DEVICES", std::to_string(gpu)}}, [&](std::size_t i, const Measurement &m) {
                    if (!on_measured) return;
                    Measurement stamped = m;
                    stamp(stamped);
                    on_measured(i, stamped);
                });
        } catch (...) {
            release(gpu); // the caller's exception, after the group
            throw;
        }
        release(gpu);
        for (Measurement &m : ms)
            stamp(m);
        return ms;
    }

private:
    std::size_t acquire() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            for (std::size_t i = 0; i < busy_.size(); ++i) {
                if (!busy_[i]) {
                    busy_[i] = true;
                    return i;
                }
            }
            free_.wait(lock);
        }
    }
    void release(std::size_t gpu) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            busy_[gpu] = false;
        }
        free_.notify_one();
    }

    std::vector<GpuProfile> gpus_;
    std::vector<bool> busy_;
    TimingOptions timing_;
    std::mutex mutex_;
    std::condition_variable free_;
};

} // namespace

std::unique_ptr<Runner> make_cuda_runner(const TimingOptions &timing) {
    LocalGpuQuery q = query_local_gpus();
    if (q.devices.empty())
        throw UnavailableError("--device cuda needs a GPU and none is visible here (" + q.problem +
                               "); use --device opencl to benchmark on POCL, the CPU's OpenCL, instead");
    return std::make_unique<CudaRunner>(q.devices, timing);
}

std::optional<DeviceKind> default_device_kind() {
    if (!query_local_gpus().devices.empty()) return DeviceKind::Cuda;
    return std::nullopt;
}

} // namespace gpusched
