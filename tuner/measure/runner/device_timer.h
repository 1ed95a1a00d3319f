#pragma once
// What clock a timed call of the benchmark harness (benchmark_main.cpp) is
// read with (issue 56).
//
// - "cuda-events": on a CUDA harness, two CUDA events on stream 0 around
//   the call, their elapsed time read on the device's own clock. The host
//   clock adds what the host does around the GPU's work, the return from
//   the synchronize above all: a few microseconds of scheduling that are a
//   large share of the 20-50 us many suite pipelines take.
// - "host-clock": std::chrono::steady_clock around the call and the sync of
//   its outputs, where no event can be used: OpenCL (POCL: the device is the
//   host, so its clock is the device's), a CPU build, or a CUDA harness whose
//   driver lacks the entry points (harness_cuda.h).
//
// A timed call is: start(), the pipeline call, pipeline_returned(), the
// device sync of every output, elapsed_ms(). The end event is recorded when
// the pipeline call returns, before the host waits: it completes, in stream
// order, when the GPU finishes the pipeline's last work, so the interval
// ends there rather than when the host wakes from its sync.
//
// Invariant: a timer that has been made measures every call of the process
// the same way; a CUDA call that fails once events were working ends the
// harness as a device error (exit 3) rather than switch clocks mid-sample.

#include <memory>
#include <string>

namespace gpusched::harness {

class DeviceTimer {
public:
    virtual ~DeviceTimer() = default;
    // "cuda-events" or "host-clock", as benchmark.json's "timer" says.
    virtual const char *name() const = 0;
    virtual void start() = 0;
    virtual void pipeline_returned() = 0;
    // After the outputs' device sync: the call's milliseconds.
    virtual double elapsed_ms() = 0;
};

// The timer for the harness's device ("cuda", "opencl" or "none", as
// benchmark_main.cpp names it), made after the first call (the CUDA
// context exists by then). Where CUDA events cannot be made, the host
// clock, and *why_not says why (empty otherwise).
std::unique_ptr<DeviceTimer> make_device_timer(const std::string &device, std::string *why_not);

} // namespace gpusched::harness
