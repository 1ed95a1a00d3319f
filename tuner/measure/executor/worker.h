#pragma once
// The worker: what one element of a slurm executor's job array runs on its
// node (`gpusched worker <scope folder> --array N`). It reads which task its
// element is (arrays/N.json at $SLURM_ARRAY_TASK_ID), benchmarks that
// task's executable on this node's device exactly as the local runner would
// (tuner/measure/runner/runner.h: the same harness, timing and output check), and
// writes the measurement to results/<task>.json, whole (work_folder.h).
//
// Exit status: 0 when a result was written, whatever the sample did (a
// crash or a wrong output is a measurement, not a failed job); non-zero
// when this node could not benchmark at all (no device, an unreadable task,
// an unwritable result), which Slurm reports as a failed job and the driver
// retries, perhaps on another node.
//
// GPUSCHED_WORKER_FAIL_FIRST_ATTEMPT=<label> (fault injection, for tests
// and for checking a cluster's retry path): the task with that label exits
// 70 on its first attempt before benchmarking.

#include <optional>
#include <string>

namespace gpusched {

// Exit statuses of the worker.
constexpr int kWorkerOk = 0;
constexpr int kWorkerBadTask = 1;        // the work folder does not say what to run
constexpr int kWorkerNoDevice = 2;       // this node cannot run the device
constexpr int kWorkerInjectedFault = 70; // EX_SOFTWARE, on request

// index: the array element; nullopt: $SLURM_ARRAY_TASK_ID.
int run_worker(const std::string &scope_dir, int64_t array, std::optional<int> index);

} // namespace gpusched
