#pragma once
// What the modes, the executors and the Slurm worker ask of a benchmark
// device, answered by the device (issue 58: the device is the runner's
// business). Each answer is written per DeviceKind in device_traits.cpp, in
// switches without a default: the compiler (-Wswitch) names every question
// a new device has not answered, instead of the device silently taking
// another one's branch.

#include <cstdint>
#include <map>
#include <string>

#include "tuner/measure/runner/runner.h"

namespace gpusched {

// Whether a sample's benchmark links the library its batch compiled. The
// batch compiles for CUDA, the device's own target; OpenCL's benchmarks
// compile the schedule again for their target, its record replayed.
bool benchmarks_the_batch_library(DeviceKind kind);

// Why no benchmark of a batch compiled to `library` can run on this
// machine's device, checked once before any is built (a CUDA driver older
// than the library's PTX fails them all alike); empty when none is known.
std::string batch_library_problem(DeviceKind kind, const std::string &library);

// The device a benchmark on this node (a Slurm worker's) gets: its name as
// measurements store it, its last-level cache (what the flush covers) and
// the environment its harness needs; or, in `problem`, one line saying why
// this node has none.
struct NodeDevice {
    std::string name;
    int64_t last_level_cache_bytes = 0;
    std::map<std::string, std::string> env;
    std::string problem;
};
NodeDevice node_device(DeviceKind kind, const std::string &host, const std::string &work_dir);

// The device name a driver records for benchmarks that run on other nodes:
// its own GPU's where it has one (a partition is one GPU model), else
// `fallback` (the --gpu profile's); POCL's is the same on every node.
std::string device_name_from_driver(DeviceKind kind, const std::string &fallback);

} // namespace gpusched
