#include "db/migrations.h"

namespace gpusched::db {

const std::vector<Migration> &migrations() {
    static const std::vector<Migration> all = {
        {1, "pipelines, runs, samples, kernels, weights", R"sql(
CREATE TABLE pipelines (
    id              INTEGER PRIMARY KEY,
    generator_path  TEXT NOT NULL,
    generator_hash  TEXT NOT NULL,
    generator_name  TEXT NOT NULL,
    params          TEXT NOT NULL,
    target          TEXT NOT NULL,
    gpu             TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (generator_hash, generator_name, params, target, gpu)
);
CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    pipeline_id       INTEGER NOT NULL REFERENCES pipelines(id),
    mode              TEXT NOT NULL CHECK (mode IN ('oneshot', 'top5', 'autotune')),
    autoscheduler     TEXT NOT NULL,
    config            TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'interrupted')),
    gpusched_version  TEXT NOT NULL,
    best_sample_id    INTEGER,
    error             TEXT,
    started_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at       TEXT
);
CREATE INDEX runs_by_pipeline ON runs(pipeline_id);
CREATE TABLE samples (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch              INTEGER NOT NULL,
    idx                INTEGER NOT NULL,
    seed               INTEGER,
    search_config      TEXT,
    decisions          TEXT,
    schedule_source    TEXT,
    featurization      BLOB,
    predicted_cost     REAL,
    autoschedule_s     REAL,
    compile_s          REAL,
    ptxas_status       TEXT NOT NULL CHECK (ptxas_status IN ('checked', 'not checked', 'failed')),
    ptxas_detail       TEXT,
    runtime_min_ms     REAL,
    runtime_median_ms  REAL,
    runtime_reps       INTEGER,
    validation         TEXT NOT NULL DEFAULT 'not run' CHECK (validation IN ('not run', 'passed', 'failed')),
    status             TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    error              TEXT,
    created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (run_id, batch, idx)
);
CREATE TABLE kernels (
    sample_id            INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    registers            INTEGER NOT NULL,
    spill_store_bytes    INTEGER NOT NULL,
    spill_load_bytes     INTEGER NOT NULL,
    stack_frame_bytes    INTEGER NOT NULL,
    static_shared_bytes  INTEGER NOT NULL,
    barriers             INTEGER NOT NULL,
    PRIMARY KEY (sample_id, name)
);
CREATE TABLE weights (
    id          INTEGER PRIMARY KEY,
    path        TEXT NOT NULL,
    checksum    TEXT NOT NULL,
    provenance  TEXT NOT NULL,
    trained_on  TEXT NOT NULL,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
)sql"},
        {2, "validation detail per sample", R"sql(
ALTER TABLE samples ADD COLUMN validation_detail TEXT;
)sql"},
        // Top 5 and Autotune measure samples. A measurement belongs to the
        // device it ran on (a GPU's name, or pocl-<cpu model> for the OpenCL
        // device): times of different devices are never compared. `benchmark`
        // is the measurement's outcome (NULL: not benchmarked), and
        // benchmark_detail the harness's record (JSON: reps, first call,
        // harness seconds, the error).
        {3, "benchmark device, outcome and record per sample", R"sql(
ALTER TABLE samples ADD COLUMN device TEXT;
ALTER TABLE samples ADD COLUMN benchmark TEXT CHECK (benchmark IS NULL OR benchmark IN
    ('measured', 'wrong output', 'crashed', 'timeout', 'out of memory', 'device error', 'build failed', 'not run'));
ALTER TABLE samples ADD COLUMN benchmark_detail TEXT;
CREATE INDEX samples_by_device ON samples(device) WHERE device IS NOT NULL;
)sql"},
        // Autotune (tuner/modes/autotune.h): one row per batch of a run, with the
        // weights its searches used (NULL: the embedded defaults), how far it
        // got, and how well those weights ranked its measured samples before
        // the model was retrained on them (the learning curve). A run stopped
        // by a budget is 'finished' with stopped_by saying which one.
        {4, "autotune batches: weights per batch, learning stats, stop reason", R"sql(
CREATE TABLE autotune_batches (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    batch        INTEGER NOT NULL,
    weights_id   INTEGER REFERENCES weights(id),
    status       TEXT NOT NULL CHECK (status IN ('running', 'measured', 'finished')),
    samples      INTEGER NOT NULL DEFAULT 0,
    measured     INTEGER NOT NULL DEFAULT 0,
    failed       INTEGER NOT NULL DEFAULT 0,
    spilled      INTEGER NOT NULL DEFAULT 0,
    best_ms      REAL,
    spearman     REAL,
    kendall      REAL,
    regret       REAL,
    retrain_s    REAL,
    started_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at  TEXT,
    PRIMARY KEY (run_id, batch)
);
ALTER TABLE runs ADD COLUMN stopped_by TEXT;
)sql"},
        // GPU fill (core/gpu_fill.h): the share of the GPU's resident
        // threads the schedule's stages launch, weighted by their work, and
        // the least among stages with 1% of the work or more, so that a
        // schedule leaving the GPU to one thread can be found with SQL.
        // NULL for samples whose search record has none (other schedule
        // sources, records written before it).
        {5, "GPU fill per sample", R"sql(
ALTER TABLE samples ADD COLUMN gpu_fill REAL;
ALTER TABLE samples ADD COLUMN gpu_fill_least REAL;
)sql"},
        // A Top 5 or Autotune run whose measured baseline (naive, li2018,
        // manual) was faster than every sample it measured hands the user
        // that baseline's schedule (issue 55): best_sample_id is then the
        // baseline's sample, in the baseline's own run, and kept_source
        // names its source. NULL: the run kept one of its own samples.
        {6, "the schedule source a run kept", R"sql(
ALTER TABLE runs ADD COLUMN kept_source TEXT;
)sql"},
    };
    return all;
}

int current_schema_version() {
    return migrations().back().version;
}

} // namespace gpusched::db
