#pragma once
// What the modes that measure share besides the round itself
// (tuner/measure/measuring_round.h): the requests a schedule is rebuilt
// from, the executor options of a mode, and how a measurement becomes a
// database row.

#include <string>

#include "common/gpu_profile.h"
#include "db/sample_store.h"
#include "tuner/generate/batch.h"
#include "tuner/measure/executor/executor.h"
#include "tuner/measure/runner/benchmark_build.h"

namespace gpusched {

// The validation request naming a schedule of this pipeline: what the CPU
// reference and every benchmark build start from.
ValidationRequest schedule_request(const OneShotOptions &options, const ScheduleSource &source,
                                   const std::string &work_dir);

// The benchmark build request of a searched sample: cuda links the batch's
// library, opencl compiles again for host-opencl replaying its record.
BenchmarkBuildRequest sample_build_request(const OneShotOptions &options, const BatchInputs &inputs,
                                           const OneShotSample &sample, DeviceKind device,
                                           const std::string &benchmark_target, const std::string &dir);

// The executor options of a mode: the mode's device and timing, and for a
// driver without the GPU the profile's name to store times under.
ExecutorOptions executor_options(ExecutorOptions base, DeviceKind device, const TimingOptions &timing,
                                 const GpuProfile &gpu);

// The database row update for a measurement; the execution record (which
// executor, which Slurm jobs) goes into its detail beside the measurement.
db::MeasurementRow measurement_row(const Measurement &m, const ExecutionRecord &execution = {});

// The measurement of something that never reached the device.
Measurement not_benchmarked(const std::string &label, const std::string &device, DeviceKind kind,
                            MeasureOutcome outcome, const std::string &error);

} // namespace gpusched
