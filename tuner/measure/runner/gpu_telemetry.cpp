#include "tuner/measure/runner/gpu_telemetry.h"

#include <dlfcn.h>

#include "tuner/dl_symbol.h"
#include "tuner/measure/runner/harness_cuda.h"

namespace gpusched::harness {
namespace {

// nvml.h's types and values, declared here so no NVIDIA header is needed to
// build (as tuner/cuda_device_query.cpp does for cuda.h).
using nvmlReturn_t = int;
using nvmlDevice_t = void *;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;        // nvmlClockType_t NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0; // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU

struct Nvml {
    nvmlReturn_t (*init)() = nullptr;                                             // nvmlInit_v2
    nvmlReturn_t (*handle_by_pci_bus_id)(const char *, nvmlDevice_t *) = nullptr; // ..._v2
    nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned *) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *) = nullptr;
    std::string problem; // why not, when a pointer above is null
};

// NVML's entry points, loaded and initialised, or why not.
Nvml load_and_init_nvml() {
    Nvml n;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        n.problem = "libnvidia-ml.so.1 cannot be loaded";
        return n;
    }
    Nvml loaded;
    if (!load_symbol(h, "nvmlInit_v2", loaded.init) ||
        !load_symbol(h, "nvmlDeviceGetHandleByPciBusId_v2", loaded.handle_by_pci_bus_id) ||
        !load_symbol(h, "nvmlDeviceGetClockInfo", loaded.clock_info) ||
        !load_symbol(h, "nvmlDeviceGetTemperature", loaded.temperature)) {
        n.problem = "libnvidia-ml.so.1 lacks an entry point the harness needs";
        return n;
    }
    if (nvmlReturn_t rc = loaded.init(); rc != kNvmlSuccess) {
        n.problem = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
        return n;
    }
    return loaded;
}

// Loaded and initialised once per harness process (never shut down: the
// harness leaves with _Exit).
const Nvml &nvml() {
    static const Nvml n = load_and_init_nvml();
    return n;
}

// The PCI address of the device Halide's context is on ("0000:3b:00.0").
std::string current_pci_bus_id(std::string &why_not) {
    CudaContextScope scope;
    if (!scope.ok()) {
        why_not = scope.problem();
        return {};
    }
    CUdevice device = 0;
    if (CUresult rc = scope.driver().cuCtxGetDevice(&device); rc != 0) {
        why_not = cuda_failure("cuCtxGetDevice", rc);
        return {};
    }
    char id[64] = {};
    if (CUresult rc = scope.driver().cuDeviceGetPCIBusId(id, sizeof id, device); rc != 0) {
        why_not = cuda_failure("cuDeviceGetPCIBusId", rc);
        return {};
    }
    return id;
}

} // namespace

GpuTelemetry read_gpu_telemetry(const std::string &device, std::string *why_not) {
    GpuTelemetry t;
    std::string why;
    auto done = [&] {
        if (why_not) *why_not = why;
        return t;
    };
    if (device != "cuda") {
        why = "not a CUDA device";
        return done();
    }
    const Nvml &n = nvml();
    if (!n.init) {
        why = n.problem;
        return done();
    }
    const std::string bus_id = current_pci_bus_id(why);
    if (bus_id.empty()) return done();
    nvmlDevice_t handle = nullptr;
    if (nvmlReturn_t rc = n.handle_by_pci_bus_id(bus_id.c_str(), &handle); rc != kNvmlSuccess) {
        why = "NVML does not know the GPU at " + bus_id + " (NVML error " + std::to_string(rc) + ")";
        return done();
    }
    unsigned value = 0;
    if (n.clock_info(handle, kNvmlClockSm, &value) == kNvmlSuccess) t.sm_clock_mhz = value;
    if (n.temperature(handle, kNvmlTemperatureGpu, &value) == kNvmlSuccess) t.temperature_c = value;
    if (!t.sm_clock_mhz || !t.temperature_c) why = "NVML did not report the SM clock or the temperature";
    return done();
}

} // namespace gpusched::harness
