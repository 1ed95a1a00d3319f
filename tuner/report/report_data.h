#pragma once
// What the HTML report shows, read from the sample database in one read
// transaction (one consistent snapshot while a nightly may be writing):
// the runs a filter selects, grouped by pipeline and measuring device, with
// their samples, Autotune's per-batch learning statistics, the winning
// schedule of each group and the measured baselines to compare it with.
//
// Invariants: a group holds the samples of exactly one device (a GPU's name
// or pocl-<cpu>; times of two devices are never put in one group, so never
// in one plot); a sample's device is where it was measured, or for a sample
// never measured (failed before its benchmark, or not among Top 5's picks)
// the device its run measured on. Runs that measured nothing (One Shot) form
// groups with an empty device.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/sample_store.h"

#include "tuner/modes/learning.h"

namespace gpusched::report {

// Which runs the report covers. Set fields combine (all must hold); none
// set: every run in the database.
struct ReportFilter {
    std::optional<int64_t> run_id;
    std::string pipeline; // generator name, as `db runs` shows it
    std::string since;    // ISO date or date-time, UTC (see parse_since)
    // In words, for the report's header and the empty-selection error.
    std::string describe() const;
};

// "2026-11-23", "2026-11-23T06:00", "2026-11-23 06:00:30" or
// "2026-11-23T06:00:30.250" (optionally with a trailing Z) to the database's
// timestamp form, "2026-11-23T06:00:00.000Z".
// Throws UserError naming the text for anything else.
std::string parse_since(const std::string &text);

struct ReportSample {
    int64_t id = 0, run_id = 0;
    int batch = 0, idx = 0;
    std::optional<double> predicted_cost;
    std::optional<double> runtime_ms; // median over repetitions
    std::string status, benchmark, validation, ptxas_status;
    std::string device;       // as the group's (see the invariant above)
    std::string failure;      // why it failed; empty when it did not
    int64_t spill_bytes = 0;  // stores + loads over its kernels
    std::string spill_detail; // per spilling kernel, in words
    // Status ok, benchmarked with a time, output not wrong: a training
    // example and a point on the plots.
    bool measured() const;
};

struct ReportRun {
    int64_t id = 0;
    std::string mode, autoscheduler, status, started_at, finished_at, stopped_by, error;
    std::vector<ReportSample> samples;         // by (batch, idx)
    std::vector<db::AutotuneBatchRow> batches; // Autotune only
    std::optional<double> spearman, kendall;   // predicted vs measured, whole run
    std::optional<int64_t> chosen_sample_id;   // runs.best_sample_id
};

struct ReportPipeline {
    int64_t id = 0;
    std::string generator_name, params, target, gpu;
};

struct BaselineTime {
    int64_t run_id = 0;
    double runtime_ms = 0;
};

// The schedule a group would ship: the fastest measured sample of its
// gpusched runs, or (nothing measured) the newest run's chosen sample.
struct Winner {
    int64_t sample_id = 0, run_id = 0;
    int batch = 0, idx = 0;
    std::optional<double> runtime_ms; // none: chosen by prediction only
    std::optional<double> predicted_cost;
    // GPU fill (core/gpu_fill.h): weighted by work, and the least of the
    // stages with 1% of it; none for samples without a search record.
    std::optional<double> gpu_fill, gpu_fill_least;
    std::string schedule_source;
};

struct DeviceGroup {
    ReportPipeline pipeline;
    std::string device;          // empty: nothing measured
    std::vector<ReportRun> runs; // the selected gpusched runs, oldest first
    std::optional<Winner> winner;
    // Per baseline source (naive, li2018, manual, ...): the fastest sample
    // of its newest measured run for this pipeline on this device, from the
    // whole database (a baseline is a reference point, not part of a night).
    std::map<std::string, BaselineTime> baselines;
};

// A selected run, for the report's list of what ran (baseline runs included).
struct RunListing {
    int64_t id = 0;
    std::string generator_name, gpu, mode, autoscheduler, status, started_at, device;
    int64_t samples = 0, measured = 0, failed = 0;
};

struct ReportData {
    std::string database_path;
    std::string filter; // ReportFilter::describe()
    std::vector<RunListing> runs;
    std::vector<DeviceGroup> groups;
    // `report --learning`: the retraining figures (learning_section.h).
    std::optional<LearningReport> learning;
};

// Reads everything the report needs. Throws UserError when the filter
// selects no run (naming the filter), db::DbError for a database problem.
ReportData load_report_data(db::Database &database, const ReportFilter &filter);

} // namespace gpusched::report
