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
    std::string generator_hash;  // of the generator executable's bytes
    std::string generator_name;
    std::string params;          // canonical JSON object of generator params
    std::string target;          // Halide target string
    std::string gpu;             // GPU profile name
};

struct RunInfo {
    int64_t pipeline_id = 0;
    std::string mode;           // oneshot | top5 | autotune
    std::string autoscheduler;  // gpusched | li2018 | ...
    std::string config;         // JSON
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
    std::string search_config;  // JSON
    std::string decisions;      // JSON decision record
    std::string schedule_source;
    std::vector<uint8_t> featurization;
    std::optional<double> predicted_cost;
    std::optional<double> autoschedule_s;
    std::optional<double> compile_s;
    std::string ptxas_status = "not checked";  // checked | not checked | failed
    std::string ptxas_detail;
    std::optional<double> runtime_min_ms;
    std::optional<double> runtime_median_ms;
    std::optional<int64_t> runtime_reps;
    std::string validation = "not run";  // not run | passed | failed
    std::string validation_detail;
    std::string status = "ok";           // ok | failed | timeout
    std::string error;
    std::vector<KernelRow> kernels;
};

struct RunSummary {
    int64_t id = 0;
    std::string generator_name, params, target, gpu, mode, autoscheduler, status, started_at;
    std::optional<std::string> finished_at;
    int64_t samples = 0, failed_samples = 0;
    std::optional<int64_t> best_sample_id;
    std::optional<double> best_predicted_cost, best_runtime_ms;
};

struct BestResult {
    std::string generator_name, params, target, gpu;
    int64_t sample_id = 0, run_id = 0;
    std::string mode, autoscheduler;
    std::optional<double> runtime_ms;     // best measured median, if any sample was measured
    std::optional<double> predicted_cost; // of that sample
};

// A benchmarked sample with its featurization: one training example.
struct MeasuredSample {
    int64_t sample_id = 0;
    int64_t pipeline_id = 0;
    std::string generator_name, params, gpu;
    std::vector<uint8_t> featurization;
    double runtime_ms = 0;  // median over repetitions
};

struct WeightsRecord {
    std::string path, checksum, provenance, trained_on;  // trained_on: JSON
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

    // Newest first.
    std::vector<RunSummary> list_runs(int limit = 50);
    // Per pipeline (generator, params, target, GPU): the fastest measured
    // sample, or when none was measured, the chosen sample of the newest run.
    std::vector<BestResult> best_per_pipeline();
    std::vector<SampleRow> samples_of_run(int64_t run_id);
    // (batch, idx) pairs already stored for a run, to resume it.
    std::vector<std::pair<int, int>> stored_sample_keys(int64_t run_id);

    // Samples usable for training: status ok, validation not failed, a
    // measured runtime and a featurization. Optionally of one generator only.
    std::vector<MeasuredSample> measured_samples(const std::string &generator_name = "");
    int64_t record_weights(const WeightsRecord &w);

private:
    Database &db_;
};

} // namespace gpusched::db
