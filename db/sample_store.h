#pragma once
// Typed access to the sample database: the rows a tuning run writes
// (pipelines, runs, samples with their kernels) and the questions a person
// asks of them afterwards. Plain data in, plain data out; no Halide, no
// subprocesses.
//
// Invariant: a sample and its kernels are written in one transaction, so a
// killed driver never leaves a sample without its kernels.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.h"

namespace gpusched::db {

struct PipelineIdentity {
    std::string generator_path;
    std::string generator_hash; // of the generator executable's bytes
    std::string generator_name;
    std::string params; // canonical JSON object of generator params
    std::string target; // Halide target string
    std::string gpu;    // GPU profile name
};

struct RunInfo {
    int64_t pipeline_id = 0;
    std::string mode;          // oneshot | top5 | autotune
    std::string autoscheduler; // gpusched | li2018 | ...
    std::string config;        // JSON
    std::string gpusched_version;
};

struct KernelRow {
    std::string name;
    int registers = 0;
    int64_t spill_store_bytes = 0;
    int64_t spill_load_bytes = 0;
    int64_t stack_frame_bytes = 0;
    int64_t static_shared_bytes = 0;
    int barriers = 0;
};

struct SampleRow {
    int batch = 0;
    int idx = 0;
    std::optional<int64_t> seed;
    std::string search_config; // JSON
    std::string decisions;     // JSON decision record
    std::string schedule_source;
    std::vector<uint8_t> featurization;
    std::optional<double> predicted_cost;
    std::optional<double> autoschedule_s;
    std::optional<double> compile_s;
    std::string ptxas_status = "not checked"; // checked | not checked | failed
    std::string ptxas_detail;
    std::optional<double> runtime_min_ms;
    std::optional<double> runtime_median_ms;
    std::optional<int64_t> runtime_reps;
    std::string validation = "not run"; // not run | passed | failed
    std::string validation_detail;
    std::string status = "ok"; // ok | failed | timeout
    std::string error;
    // Benchmarking (schema 3). device: where runtime_* were measured (a
    // GPU's name, or pocl-<cpu model>); benchmark: the outcome (empty: not
    // benchmarked; measured, wrong output, crashed, timeout, out of memory,
    // device error, build failed, not run); benchmark_detail: the harness's
    // record as JSON.
    std::optional<std::string> device;
    std::string benchmark;
    std::string benchmark_detail;
    // GPU fill (schema 5, core/gpu_fill.h), from the search record.
    std::optional<double> gpu_fill;
    std::optional<double> gpu_fill_least;
    std::vector<KernelRow> kernels;
};

// What a benchmark of a stored sample found, written onto its row.
struct MeasurementRow {
    std::string device;
    std::string benchmark; // as SampleRow::benchmark
    std::optional<double> runtime_min_ms;
    std::optional<double> runtime_median_ms;
    std::optional<int64_t> runtime_reps;
    std::string validation = "not run"; // the benchmarked build's output check
    std::string validation_detail;
    std::string status = "ok"; // ok | failed | timeout
    std::string error;
    std::string detail; // JSON
};

struct RunSummary {
    int64_t id = 0;
    std::string generator_name, params, target, gpu, mode, autoscheduler, status, started_at;
    std::optional<std::string> finished_at;
    int64_t samples = 0, failed_samples = 0;
    std::optional<int64_t> best_sample_id;
    std::optional<double> best_predicted_cost, best_runtime_ms;
    // Where its samples were measured (a GPU's name, pocl-<cpu model>); none
    // when nothing was (One Shot).
    std::optional<std::string> device;
};

struct BestResult {
    std::string generator_name, params, target, gpu;
    std::optional<std::string> device; // where runtime_ms was measured; none when unmeasured
    int64_t sample_id = 0, run_id = 0;
    std::string mode, autoscheduler;
    std::optional<double> runtime_ms;     // best measured median, if any sample was measured
    std::optional<double> predicted_cost; // of that sample
};

// A benchmarked sample with its featurization: one training example.
struct MeasuredSample {
    int64_t sample_id = 0;
    int64_t pipeline_id = 0;
    int64_t run_id = 0;
    int batch = 0; // an Autotune batch; 0 for the other modes
    std::string generator_name, params, gpu;
    std::string device; // where it was measured; training never mixes devices
    std::vector<uint8_t> featurization;
    double runtime_ms = 0; // median over repetitions
};

// How well one run's predictions ordered its measured samples.
struct RunRankCorrelation {
    int64_t run_id = 0;
    std::string mode, autoscheduler;
    int64_t measured = 0;
    std::optional<double> spearman, kendall; // need at least two measured samples
};

// `gpusched db stats`: one pipeline on one device. The device of a run is
// the device its samples were measured on; runs that measured nothing
// (One Shot) are grouped under no device.
struct DeviceStats {
    int64_t pipeline_id = 0;
    std::string generator_name, params, gpu;
    std::optional<std::string> device;
    int64_t samples = 0, measured = 0, failed = 0, spilled = 0;
    std::optional<double> best_ms, median_ms; // over measured samples' median times
    std::vector<RunRankCorrelation> runs;
};

struct WeightsRecord {
    std::string path, checksum, provenance, trained_on; // trained_on: JSON
};

// Which measured samples train a model (measured_samples()). Empty / zero
// fields do not filter.
struct TrainingFilter {
    std::string generator_name;
    std::string device;
    int64_t run_id = 0;
    int64_t pipeline_id = 0;
    // Never these pipelines: the nightly's hold-one-out models.
    std::vector<int64_t> exclude_pipeline_ids;
};

// One batch of an Autotune run (schema 4): the weights its searches used
// (none: the embedded defaults), its progress, and how well those weights
// ranked its measured samples.
struct AutotuneBatchRow {
    int64_t run_id = 0;
    int batch = 0;
    std::optional<int64_t> weights_id;
    std::string weights_path;       // of weights_id; empty for the embedded defaults
    std::string status = "running"; // running | measured | finished
    int64_t samples = 0, measured = 0, failed = 0, spilled = 0;
    std::optional<double> best_ms, spearman, kendall, regret, retrain_s;
};

// An autotune run as stored: what resume needs.
struct StoredRun {
    int64_t id = 0, pipeline_id = 0;
    std::string mode, status, config;
    std::optional<std::string> stopped_by;
    PipelineIdentity pipeline;
};

class SampleStore {
public:
    explicit SampleStore(Database &db) : db_(db) {}

    // Finds or inserts the pipeline; returns its id.
    int64_t upsert_pipeline(const PipelineIdentity &p);
    int64_t start_run(const RunInfo &run);
    // Writes the sample and its kernels atomically; returns the sample id.
    // Throws DbError if (run, batch, idx) already exists.
    int64_t add_sample(int64_t run_id, const SampleRow &s);
    void finish_run(int64_t run_id, const std::string &status, std::optional<int64_t> best_sample_id,
                    const std::string &error = "");
    // The run kept a baseline's schedule (its sample in the baseline's own
    // run, best_sample_id), measured faster than every sample of the run:
    // kept_source names that baseline's source.
    void set_kept_source(int64_t run_id, const std::string &source);
    // Writes a benchmark's outcome onto a stored sample, in one transaction.
    void record_measurement(int64_t sample_id, const MeasurementRow &m);

    // Newest first.
    std::vector<RunSummary> list_runs(int limit = 50);
    // Per pipeline (generator, params, target, GPU) and measuring device:
    // the fastest measured sample; a pipeline nothing was measured for gets
    // the chosen sample of its newest run, with no device. Times of two
    // devices are never compared.
    std::vector<BestResult> best_per_pipeline();
    // Per pipeline and device: counts, times and each run's rank correlation.
    std::vector<DeviceStats> stats();
    std::vector<SampleRow> samples_of_run(int64_t run_id);
    // (batch, idx) pairs already stored for a run, to resume it.
    std::vector<std::pair<int, int>> stored_sample_keys(int64_t run_id);

    // Samples usable for training: status ok, validation not failed, a
    // measured runtime and a featurization. Optionally of one generator only,
    // and of one device only.
    std::vector<MeasuredSample> measured_samples(const std::string &generator_name = "",
                                                 const std::string &device = "");
    std::vector<MeasuredSample> measured_samples(const TrainingFilter &filter);
    int64_t record_weights(const WeightsRecord &w);
    // The path of a recorded weights file; empty if there is no such row.
    std::string weights_path(int64_t weights_id);

    // --- Autotune (schema 4).
    std::optional<StoredRun> find_run(int64_t run_id);
    void set_run_status(int64_t run_id, const std::string &status,
                        const std::optional<std::string> &stopped_by, const std::string &error = "");
    // Inserts the batch row, or leaves an existing one as it is.
    void begin_batch(int64_t run_id, int batch, std::optional<int64_t> weights_id);
    void update_batch(const AutotuneBatchRow &row);
    std::vector<AutotuneBatchRow> autotune_batches(int64_t run_id);
    // The id of each stored sample of a batch, by idx, and whether it is
    // complete (failed before benchmarking, or benchmarked).
    struct StoredSampleState {
        int idx = 0;
        int64_t id = 0;
        bool complete = false;
        bool compiled = false; // status ok before benchmarking: searched, compiled, ptxas passed
        bool measured = false; // status ok, a time, output not wrong
        bool failed = false;   // status not ok
        bool spilled = false;  // a kernel spills registers
        std::optional<double> predicted_cost, runtime_ms;
    };
    std::vector<StoredSampleState> batch_samples(int64_t run_id, int batch);

private:
    Database &db_;
};

} // namespace gpusched::db
