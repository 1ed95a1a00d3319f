#include "tuner/measure/runner/device_timer.h"

#include <chrono>

#include "tuner/measure/runner/harness_cuda.h"

namespace gpusched::harness {
namespace {

class HostClockTimer : public DeviceTimer {
public:
    const char *name() const override { return "host-clock"; }
    void start() override { t0_ = Clock::now(); }
    void pipeline_returned() override {}
    double elapsed_ms() override {
        return std::chrono::duration<double, std::milli>(Clock::now() - t0_).count();
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0_;
};

// The events are recorded on stream 0, the legacy default stream. Halide
// 14's CUDA runtime launches every kernel and copy there
// (halide_default_cuda_get_stream returns the null stream), and the legacy
// default stream waits for, and is waited on by, every blocking stream of
// the context: a runtime whose get_stream was overridden to such a stream is
// still bracketed by events on stream 0. (A non-blocking stream would not
// be; nothing in gpusched makes one.)
constexpr CUstream kLegacyDefaultStream = nullptr;

class CudaEventTimer : public DeviceTimer {
public:
    CudaEventTimer(CUevent start, CUevent end) : start_(start), end_(end) {}
    const char *name() const override { return "cuda-events"; }

    void start() override { record(start_, "cuEventRecord (start)"); }
    void pipeline_returned() override { record(end_, "cuEventRecord (end)"); }

    double elapsed_ms() override {
        CudaContextScope scope;
        if (!scope.ok()) end_with_device_error("CUDA event timing: " + scope.problem());
        // The outputs' sync has returned, so this returns at once; it is
        // what the driver requires before it reads the elapsed time.
        if (CUresult rc = scope.driver().cuEventSynchronize(end_); rc != 0)
            end_with_device_error(cuda_failure("cuEventSynchronize", rc));
        float ms = 0;
        if (CUresult rc = scope.driver().cuEventElapsedTime(&ms, start_, end_); rc != 0)
            end_with_device_error(cuda_failure("cuEventElapsedTime", rc));
        return ms;
    }

private:
    static void record(CUevent event, const char *what) {
        CudaContextScope scope;
        if (!scope.ok()) end_with_device_error(std::string("CUDA event timing: ") + scope.problem());
        if (CUresult rc = scope.driver().cuEventRecord(event, kLegacyDefaultStream); rc != 0)
            end_with_device_error(cuda_failure(what, rc));
    }

    CUevent start_, end_;
};

// Two events and one round trip through them, or why not. The events live
// as long as the process (the harness leaves with _Exit).
std::unique_ptr<DeviceTimer> make_cuda_event_timer(std::string &why_not) {
    CudaContextScope scope;
    if (!scope.ok()) {
        why_not = scope.problem();
        return nullptr;
    }
    const CudaDriver &d = scope.driver();
    // CU_EVENT_DEFAULT (0): timing enabled; the host spins in
    // cuEventSynchronize, which the sync before it has made instant anyway.
    CUevent start = nullptr, end = nullptr;
    if (CUresult rc = d.cuEventCreate(&start, 0); rc != 0) {
        why_not = cuda_failure("cuEventCreate", rc);
        return nullptr;
    }
    if (CUresult rc = d.cuEventCreate(&end, 0); rc != 0) {
        why_not = cuda_failure("cuEventCreate", rc);
        return nullptr;
    }
    float ms = 0;
    CUresult rc = d.cuEventRecord(start, kLegacyDefaultStream);
    if (rc == 0) rc = d.cuEventRecord(end, kLegacyDefaultStream);
    if (rc == 0) rc = d.cuEventSynchronize(end);
    if (rc == 0) rc = d.cuEventElapsedTime(&ms, start, end);
    if (rc != 0) {
        why_not = cuda_failure("a first round trip through CUDA events", rc);
        return nullptr;
    }
    return std::make_unique<CudaEventTimer>(start, end);
}

} // namespace

std::unique_ptr<DeviceTimer> make_device_timer(const std::string &device, std::string *why_not) {
    std::string why;
    std::unique_ptr<DeviceTimer> timer;
    if (device == "cuda") timer = make_cuda_event_timer(why);
    if (!timer) timer = std::make_unique<HostClockTimer>();
    if (why_not) *why_not = why;
    return timer;
}

} // namespace gpusched::harness
