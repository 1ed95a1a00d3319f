#pragma once
// The GPU's SM clock and temperature, read once after a sample's timed calls
// by the benchmark harness (benchmark_main.cpp; issue 56): a time measured
// at 1980 MHz and one measured at a thermally throttled 1400 MHz are not the
// same schedule's worth, and without the clock beside the time nobody can
// tell which a stored sample was.
//
// Read through NVML (libnvidia-ml.so.1, part of the NVIDIA driver), loaded
// with dlopen like the CUDA driver (no link-time dependency). The device is
// the one the pipeline ran on, found by its PCI address: NVML numbers every
// GPU of the machine and ignores CUDA_VISIBLE_DEVICES, which the cuda runner
// sets, so CUDA's device 0 is not NVML's.

#include <optional>
#include <string>

namespace gpusched::harness {

struct GpuTelemetry {
    std::optional<unsigned> sm_clock_mhz;  // nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
    std::optional<unsigned> temperature_c; // nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)
};

// Both empty where the harness's device is not "cuda", NVML cannot be
// loaded, or the device is not found; *why_not then says why (empty when
// both were read).
GpuTelemetry read_gpu_telemetry(const std::string &device, std::string *why_not);

} // namespace gpusched::harness
