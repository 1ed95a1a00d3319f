#pragma once
// The questions the tuning modes and the nightly driver ask of stored runs
// while they work: what a run has measured so far, its fastest sample, the
// baselines already settled for it, the nightly's earlier runs of a
// pipeline. Plain data out; the SQL stays in db/.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace gpusched::db {

// A baseline run of another run that ended for good: measured (finished)
// or failed (a build that fails fails again), the newest of its source.
struct SettledBaseline {
    int64_t run_id = 0, sample_id = 0;
    bool finished = false;           // else failed
    std::optional<double> median_ms; // when finished
    std::string error;               // when failed
};

// A run's samples by how they ended.
struct RunTally {
    int64_t samples = 0, measured = 0, failed = 0, spilled = 0;
};

// A measured sample of a run, where it sits in the run.
struct FastestSample {
    int64_t id = 0;
    int batch = 0, idx = 0;
    double median_ms = 0;
};

// The sample a run chose, with its time as stored.
struct ChosenSampleTime {
    int64_t id = 0;
    double median_ms = 0;
    std::optional<double> min_ms;
    int64_t reps = 0;
    std::string device;
};

// A run tagged by who started it (runs.config's started_by).
struct TaggedRun {
    int64_t id = 0;
    std::string mode, status, stopped_by, generator_hash, config;
};

class RunQueries {
public:
    explicit RunQueries(Database &db) : db_(db) {}

    std::optional<SettledBaseline> settled_baseline(int64_t of_run, const std::string &autoscheduler);
    int64_t sample_count(int64_t run_id);
    std::optional<double> fastest_measured_ms(int64_t run_id);
    std::optional<FastestSample> fastest_measured_sample(int64_t run_id);
    RunTally tally(int64_t run_id);
    // None when the run chose nothing or its choice has no time.
    std::optional<ChosenSampleTime> chosen_sample_time(int64_t run_id);
    // Newest first: the runs started_by `tag` on `device`.
    std::vector<TaggedRun> runs_started_by(const std::string &tag, const std::string &device);
    // Every pipeline row of a generator and params, oldest first.
    std::vector<int64_t> pipeline_ids(const std::string &generator_name, const std::string &params);

private:
    Database &db_;
};

} // namespace gpusched::db
