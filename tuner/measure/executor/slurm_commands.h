#pragma once
// Slurm's commands as the slurm executor uses them, each one process through
// tuner/subprocess.h (argv, timeout, captured output): sbatch to submit an
// array, squeue (and sacct, for jobs that have left slurmctld's memory) to
// follow it, scontrol for the exit code and node of a job that ended badly,
// scancel to take jobs back. Array elements are named as Slurm prints them:
// "<array job id>_<index>".
//
// Invariant: the queries never throw; a command that fails leaves the jobs
// it asked about out of the answer (the caller treats them as unknown this
// time and asks again).

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct SlurmJobState {
    std::string state;     // PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, PREEMPTED, ...
    std::string reason;    // squeue's %r / sacct's Reason: NonZeroExitCode, Resources, ...
    std::string exit_code; // "70:0" (code:signal), when known
    std::string node;
};

struct SbatchRequest {
    std::string script, job_name, output_pattern, chdir;
    int array_size = 0;
    std::string partition, account, gres, time_limit;
};

// Returns the array job id; throws std::runtime_error with sbatch's own
// message when it refuses.
std::string sbatch_array(const SbatchRequest &request);

// The state of every element of these array jobs that Slurm still knows.
std::map<std::string, SlurmJobState> query_array_jobs(const std::vector<std::string> &array_job_ids);

// scontrol's view of one element (state, reason, exit code, node); nullopt when unknown.
std::optional<SlurmJobState> job_details(const std::string &element);

// Cancels these jobs (whole arrays or elements); false when scancel failed.
bool scancel(const std::vector<std::string> &jobs);

// States after which a job will not run again on its own.
bool is_terminal_state(const std::string &state);

// Which of sbatch, squeue, sinfo, scancel, scontrol is missing from PATH; empty when none.
std::string missing_slurm_command();

// The cluster's partitions (sinfo), the default one first as sinfo marks it
// with '*' (kept); throws std::runtime_error with sinfo's message when Slurm
// does not answer (no slurm.conf, no controller).
std::vector<std::string> slurm_partitions();

} // namespace gpusched
