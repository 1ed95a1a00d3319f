#pragma once
// The rows `gpusched report` draws: the runs a filter selects with their
// pipelines, each run's samples with what the tuner stored about how they
// ended, the kernels that spilled, one sample's schedule, and the newest
// measured time of each baseline. Plain data out; tuner/report/ turns it
// into the page.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace gpusched::db {

struct ReportRunRow {
    int64_t id = 0, pipeline_id = 0;
    std::string generator_name, params, target, gpu;
    std::string mode, autoscheduler, status, started_at, finished_at, stopped_by, error;
    std::optional<int64_t> chosen_sample_id;
};

struct ReportSampleRow {
    int64_t id = 0;
    int batch = 0, idx = 0;
    std::optional<double> predicted_cost, runtime_ms;
    std::string status, benchmark, validation, ptxas_status, device;
    std::string error, benchmark_detail, validation_detail, ptxas_detail;
};

struct SpillingKernel {
    int64_t sample_id = 0;
    std::string name;
    int64_t store_bytes = 0, load_bytes = 0;
};

struct ScheduleRow {
    int64_t sample_id = 0, run_id = 0;
    int batch = 0, idx = 0;
    std::optional<double> runtime_ms, predicted_cost, gpu_fill, gpu_fill_least;
    std::string schedule_source;
};

struct BaselineRunTime {
    int64_t run_id = 0;
    double runtime_ms = 0; // the run's fastest measured sample
};

class ReportQueries {
public:
    explicit ReportQueries(Database &db) : db_(db) {}

    // Oldest first. No run_id, an empty generator name or an empty since
    // (an ISO time as the database writes them) do not filter.
    std::vector<ReportRunRow> runs(std::optional<int64_t> run_id, const std::string &generator_name,
                                   const std::string &since);
    // By batch, then idx.
    std::vector<ReportSampleRow> samples(int64_t run_id);
    // The run's kernels that spill registers, by sample, then name.
    std::vector<SpillingKernel> spilling_kernels(int64_t run_id);
    std::optional<ScheduleRow> schedule(int64_t sample_id);
    // Per baseline autoscheduler (every one but gpusched), its newest run
    // that measured something on `device` for this pipeline.
    std::map<std::string, BaselineRunTime> newest_baseline_times(int64_t pipeline_id,
                                                                 const std::string &device);

private:
    Database &db_;
};

} // namespace gpusched::db
