#include "db/sample_store.h"

#include "db/measured.h"

#include <algorithm>
#include <map>

#include "db/rank_correlation.h"

namespace gpusched::db {

int64_t SampleStore::upsert_pipeline(const PipelineIdentity &p) {
    auto find = db_.prepare("SELECT id FROM pipelines WHERE generator_hash = ?1 AND generator_name = ?2 AND "
                            "params = ?3 AND target = ?4 AND gpu = ?5");
    find.bind(1, p.generator_hash)
        .bind(2, p.generator_name)
        .bind(3, p.params)
        .bind(4, p.target)
        .bind(5, p.gpu);
    if (find.step()) return find.integer("id");
    auto ins =
        db_.prepare("INSERT INTO pipelines (generator_path, generator_hash, generator_name, params, target, "
                    "gpu) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    ins.bind(1, p.generator_path).bind(2, p.generator_hash).bind(3, p.generator_name).bind(4, p.params);
    ins.bind(5, p.target).bind(6, p.gpu).run();
    return db_.last_insert_id();
}

int64_t SampleStore::start_run(const RunInfo &r) {
    auto ins =
        db_.prepare("INSERT INTO runs (pipeline_id, mode, autoscheduler, config, status, gpusched_version) "
                    "VALUES (?1, ?2, ?3, ?4, 'running', ?5)");
    ins.bind(1, r.pipeline_id)
        .bind(2, r.mode)
        .bind(3, r.autoscheduler)
        .bind(4, r.config)
        .bind(5, r.gpusched_version);
    ins.run();
    return db_.last_insert_id();
}

int64_t SampleStore::add_sample(int64_t run_id, const SampleRow &s) {
    int64_t id = 0;
    db_.transaction([&] {
        auto ins = db_.prepare(
            "INSERT INTO samples (run_id, batch, idx, seed, search_config, decisions, schedule_source, "
            "featurization, predicted_cost, autoschedule_s, compile_s, ptxas_status, ptxas_detail, "
            "runtime_min_ms, "
            "runtime_median_ms, runtime_reps, validation, status, error, validation_detail, device, "
            "benchmark, "
            "benchmark_detail, gpu_fill, gpu_fill_least) VALUES "
            "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
            "?21, ?22, ?23, "
            "?24, ?25)");
        ins.bind(1, run_id).bind(2, s.batch).bind(3, s.idx).bind(4, s.seed).bind(5, s.search_config);
        ins.bind(6, s.decisions).bind(7, s.schedule_source).bind_blob(8, s.featurization);
        ins.bind(9, s.predicted_cost).bind(10, s.autoschedule_s).bind(11, s.compile_s);
        ins.bind(12, s.ptxas_status).bind(13, s.ptxas_detail).bind(14, s.runtime_min_ms);
        ins.bind(15, s.runtime_median_ms).bind(16, s.runtime_reps).bind(17, s.validation).bind(18, s.status);
        ins.bind(19, s.error).bind(20, s.validation_detail).bind(21, s.device);
        if (s.benchmark.empty())
            ins.bind_null(22);
        else
            ins.bind(22, s.benchmark);
        if (s.benchmark_detail.empty())
            ins.bind_null(23);
        else
            ins.bind(23, s.benchmark_detail);
        ins.bind(24, s.gpu_fill).bind(25, s.gpu_fill_least);
        ins.run();
        id = db_.last_insert_id();
        for (const auto &k : s.kernels) {
            auto kin =
                db_.prepare("INSERT INTO kernels (sample_id, name, registers, spill_store_bytes, "
                            "spill_load_bytes, stack_frame_bytes, static_shared_bytes, barriers) VALUES "
                            "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
            kin.bind(1, id).bind(2, k.name).bind(3, k.registers).bind(4, k.spill_store_bytes);
            kin.bind(5, k.spill_load_bytes).bind(6, k.stack_frame_bytes).bind(7, k.static_shared_bytes);
            kin.bind(8, k.barriers).run();
        }
    });
    return id;
}

void SampleStore::finish_run(int64_t run_id, const std::string &status, std::optional<int64_t> best,
                             const std::string &error) {
    auto up = db_.prepare("UPDATE runs SET status = ?2, best_sample_id = ?3, error = ?4, "
                          "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1");
    up.bind(1, run_id).bind(2, status).bind(3, best);
    if (error.empty())
        up.bind_null(4);
    else
        up.bind(4, error);
    up.run();
}

void SampleStore::set_kept_source(int64_t run_id, const std::string &source) {
    db_.prepare("UPDATE runs SET kept_source = ?2 WHERE id = ?1").bind(1, run_id).bind(2, source).run();
}

void SampleStore::record_measurement(int64_t sample_id, const MeasurementRow &m) {
    db_.transaction([&] {
        auto up = db_.prepare(
            "UPDATE samples SET device = ?2, benchmark = ?3, runtime_min_ms = ?4, runtime_median_ms = ?5, "
            "runtime_reps = ?6, validation = ?7, validation_detail = ?8, status = ?9, error = ?10, "
            "benchmark_detail = ?11 WHERE id = ?1");
        up.bind(1, sample_id).bind(2, m.device).bind(3, m.benchmark).bind(4, m.runtime_min_ms);
        up.bind(5, m.runtime_median_ms)
            .bind(6, m.runtime_reps)
            .bind(7, m.validation)
            .bind(8, m.validation_detail);
        up.bind(9, m.status).bind(10, m.error).bind(11, m.detail).run();
    });
}

std::vector<RunSummary> SampleStore::list_runs(int limit) {
    auto q = db_.prepare(R"sql(
        SELECT r.id, p.generator_name, p.params, p.target, p.gpu, r.mode, r.autoscheduler, r.status,
               r.started_at, r.finished_at,
               (SELECT count(*) FROM samples s WHERE s.run_id = r.id) AS samples,
               (SELECT count(*) FROM samples s WHERE s.run_id = r.id AND s.status != 'ok') AS failed_samples,
               r.best_sample_id,
               (SELECT predicted_cost FROM samples s WHERE s.id = r.best_sample_id) AS best_predicted_cost,
               (SELECT runtime_median_ms FROM samples s WHERE s.id = r.best_sample_id) AS best_runtime_ms,
               (SELECT device FROM samples s WHERE s.run_id = r.id AND s.device IS NOT NULL LIMIT 1) AS device
        FROM runs r JOIN pipelines p ON p.id = r.pipeline_id
        ORDER BY r.id DESC LIMIT ?1)sql");
    q.bind(1, limit);
    std::vector<RunSummary> out;
    while (q.step()) {
        RunSummary r;
        r.id = q.integer("id");
        r.generator_name = q.text("generator_name");
        r.params = q.text("params");
        r.target = q.text("target");
        r.gpu = q.text("gpu");
        r.mode = q.text("mode");
        r.autoscheduler = q.text("autoscheduler");
        r.status = q.text("status");
        r.started_at = q.text("started_at");
        r.finished_at = q.optional_text("finished_at");
        r.samples = q.integer("samples");
        r.failed_samples = q.integer("failed_samples");
        r.best_sample_id = q.optional_integer("best_sample_id");
        r.best_predicted_cost = q.optional_real("best_predicted_cost");
        r.best_runtime_ms = q.optional_real("best_runtime_ms");
        r.device = q.optional_text("device");
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<BestResult> SampleStore::best_per_pipeline() {
    // Measured samples win, the fastest per (pipeline, device); a pipeline
    // with no measurement on any device gets its newest finished run's choice.
    auto q = db_.prepare(std::string(R"sql(
        WITH measured AS (
            SELECT s.id AS sample_id, s.run_id, r.pipeline_id, s.device, s.runtime_median_ms AS runtime,
                   s.predicted_cost,
                   ROW_NUMBER() OVER (PARTITION BY r.pipeline_id, coalesce(s.device, '')
                                      ORDER BY s.runtime_median_ms ASC, s.id ASC) AS rank
            FROM samples s JOIN runs r ON r.id = s.run_id
            WHERE )sql") +
                         kMeasuredSample + R"sql(),
        chosen AS (
            SELECT r.best_sample_id AS sample_id, r.id AS run_id, r.pipeline_id, NULL AS device, NULL AS runtime,
                   (SELECT predicted_cost FROM samples s WHERE s.id = r.best_sample_id) AS predicted_cost,
                   ROW_NUMBER() OVER (PARTITION BY r.pipeline_id ORDER BY r.id DESC) AS rank
            FROM runs r WHERE r.status = 'finished' AND r.best_sample_id IS NOT NULL),
        best AS (
            SELECT sample_id, run_id, pipeline_id, device, runtime, predicted_cost FROM measured WHERE rank = 1
            UNION ALL
            SELECT c.sample_id, c.run_id, c.pipeline_id, c.device, c.runtime, c.predicted_cost
            FROM chosen c WHERE c.rank = 1
                AND NOT EXISTS (SELECT 1 FROM measured m WHERE m.pipeline_id = c.pipeline_id))
        SELECT p.generator_name, p.params, p.target, p.gpu, b.sample_id, b.run_id, r.mode, r.autoscheduler,
               b.runtime, b.predicted_cost, b.device
        FROM best b JOIN pipelines p ON p.id = b.pipeline_id JOIN runs r ON r.id = b.run_id
        ORDER BY p.generator_name, p.gpu, p.params, b.device)sql");
    std::vector<BestResult> out;
    while (q.step()) {
        BestResult b;
        b.generator_name = q.text("generator_name");
        b.params = q.text("params");
        b.target = q.text("target");
        b.gpu = q.text("gpu");
        b.sample_id = q.integer("sample_id");
        b.run_id = q.integer("run_id");
        b.mode = q.text("mode");
        b.autoscheduler = q.text("autoscheduler");
        b.runtime_ms = q.optional_real("runtime");
        b.predicted_cost = q.optional_real("predicted_cost");
        b.device = q.optional_text("device");
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<SampleRow> SampleStore::samples_of_run(int64_t run_id) {
    auto q = db_.prepare("SELECT id, batch, idx, seed, search_config, decisions, schedule_source, "
                         "featurization, predicted_cost, "
                         "autoschedule_s, compile_s, ptxas_status, ptxas_detail, runtime_min_ms, "
                         "runtime_median_ms, runtime_reps, "
                         "validation, status, error, validation_detail, device, benchmark, benchmark_detail, "
                         "gpu_fill, gpu_fill_least "
                         "FROM samples WHERE run_id = ?1 ORDER BY batch, idx");
    q.bind(1, run_id);
    std::vector<SampleRow> out;
    while (q.step()) {
        SampleRow s;
        const int64_t id = q.integer("id");
        s.batch = static_cast<int>(q.integer("batch"));
        s.idx = static_cast<int>(q.integer("idx"));
        s.seed = q.optional_integer("seed");
        s.search_config = q.text("search_config");
        s.decisions = q.text("decisions");
        s.schedule_source = q.text("schedule_source");
        s.featurization = q.blob("featurization");
        s.predicted_cost = q.optional_real("predicted_cost");
        s.autoschedule_s = q.optional_real("autoschedule_s");
        s.compile_s = q.optional_real("compile_s");
        s.ptxas_status = q.text("ptxas_status");
        s.ptxas_detail = q.text("ptxas_detail");
        s.runtime_min_ms = q.optional_real("runtime_min_ms");
        s.runtime_median_ms = q.optional_real("runtime_median_ms");
        s.runtime_reps = q.optional_integer("runtime_reps");
        s.validation = q.text("validation");
        s.status = q.text("status");
        s.error = q.text("error");
        s.validation_detail = q.text("validation_detail");
        s.device = q.optional_text("device");
        s.benchmark = q.text("benchmark");
        s.benchmark_detail = q.text("benchmark_detail");
        s.gpu_fill = q.optional_real("gpu_fill");
        s.gpu_fill_least = q.optional_real("gpu_fill_least");
        auto k =
            db_.prepare("SELECT name, registers, spill_store_bytes, spill_load_bytes, stack_frame_bytes, "
                        "static_shared_bytes, barriers FROM kernels WHERE sample_id = ?1 ORDER BY name");
        k.bind(1, id);
        while (k.step()) {
            KernelRow kr;
            kr.name = k.text("name");
            kr.registers = static_cast<int>(k.integer("registers"));
            kr.spill_store_bytes = k.integer("spill_store_bytes");
            kr.spill_load_bytes = k.integer("spill_load_bytes");
            kr.stack_frame_bytes = k.integer("stack_frame_bytes");
            kr.static_shared_bytes = k.integer("static_shared_bytes");
            kr.barriers = static_cast<int>(k.integer("barriers"));
            s.kernels.push_back(kr);
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<std::pair<int, int>> SampleStore::stored_sample_keys(int64_t run_id) {
    auto q = db_.prepare("SELECT batch, idx FROM samples WHERE run_id = ?1 ORDER BY batch, idx");
    q.bind(1, run_id);
    std::vector<std::pair<int, int>> out;
    while (q.step())
        out.emplace_back(static_cast<int>(q.integer("batch")), static_cast<int>(q.integer("idx")));
    return out;
}

std::vector<MeasuredSample> SampleStore::measured_samples(const std::string &generator_name,
                                                          const std::string &device) {
    TrainingFilter f;
    f.generator_name = generator_name;
    f.device = device;
    return measured_samples(f);
}

std::vector<MeasuredSample> SampleStore::measured_samples(const TrainingFilter &filter) {
    // Measured, with a time a logarithm can take.
    auto q = db_.prepare(std::string(R"sql(
        SELECT s.id AS sample_id, p.id AS pipeline_id, p.generator_name, p.params, p.gpu, s.featurization,
               s.runtime_median_ms, coalesce(s.device, '') AS device, r.id AS run_id, s.batch
        FROM samples s JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = r.pipeline_id
        WHERE )sql") + kMeasuredSample +
                         R"sql( AND s.runtime_median_ms > 0
          AND length(s.featurization) > 0 AND (?1 = '' OR p.generator_name = ?1)
          AND (?2 = '' OR s.device = ?2) AND (?3 = 0 OR r.id = ?3) AND (?4 = 0 OR p.id = ?4)
          AND p.id NOT IN (SELECT value FROM json_each(?5))
        ORDER BY p.id, coalesce(s.device, ''), s.id)sql");
    std::string excluded = "[";
    for (std::size_t i = 0; i < filter.exclude_pipeline_ids.size(); ++i)
        excluded += (i ? "," : "") + std::to_string(filter.exclude_pipeline_ids[i]);
    excluded += "]";
    q.bind(1, filter.generator_name)
        .bind(2, filter.device)
        .bind(3, filter.run_id)
        .bind(4, filter.pipeline_id);
    q.bind(5, excluded);
    std::vector<MeasuredSample> out;
    while (q.step()) {
        MeasuredSample m;
        m.sample_id = q.integer("sample_id");
        m.pipeline_id = q.integer("pipeline_id");
        m.generator_name = q.text("generator_name");
        m.params = q.text("params");
        m.gpu = q.text("gpu");
        m.featurization = q.blob("featurization");
        m.runtime_ms = q.real("runtime_median_ms");
        m.device = q.text("device");
        m.run_id = q.integer("run_id");
        m.batch = static_cast<int>(q.integer("batch"));
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<DeviceStats> SampleStore::stats() {
    // A run's device: the one its samples were measured on (Top 5 and
    // Autotune measure on one device per run); NULL for runs that measured
    // nothing.
    auto q = db_.prepare(R"sql(
        WITH run_device AS (
            SELECT r.id AS run_id, r.pipeline_id, r.mode, r.autoscheduler,
                   (SELECT max(s.device) FROM samples s WHERE s.run_id = r.id) AS device
            FROM runs r)
        SELECT rd.pipeline_id, p.generator_name, p.params, p.gpu, rd.device, rd.run_id, rd.mode, rd.autoscheduler,
               s.status, s.benchmark, s.predicted_cost, s.runtime_median_ms, s.validation,
               EXISTS (SELECT 1 FROM kernels k WHERE k.sample_id = s.id
                       AND k.spill_store_bytes + k.spill_load_bytes > 0) AS spills
        FROM samples s JOIN run_device rd ON rd.run_id = s.run_id JOIN pipelines p ON p.id = rd.pipeline_id
        ORDER BY p.generator_name, p.params, p.gpu, coalesce(rd.device, ''), rd.run_id, s.id)sql");
    std::vector<DeviceStats> out;
    std::map<int64_t, std::pair<std::vector<double>, std::vector<double>>>
        pairs; // run -> (predicted, measured)
    std::vector<double> times;
    auto close_group = [&] {
        if (out.empty()) return;
        DeviceStats &g = out.back();
        if (!times.empty()) {
            std::sort(times.begin(), times.end());
            g.best_ms = times.front();
            const std::size_t n = times.size();
            g.median_ms = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2.0;
        }
        for (auto &run : g.runs) {
            auto &[predicted, measured] = pairs[run.run_id];
            run.measured = static_cast<int64_t>(measured.size());
            run.spearman = spearman_rho(predicted, measured);
            run.kendall = kendall_tau_b(predicted, measured);
        }
        times.clear();
        pairs.clear();
    };
    while (q.step()) {
        const int64_t pipeline_id = q.integer("pipeline_id");
        const std::optional<std::string> device = q.optional_text("device");
        if (out.empty() || out.back().pipeline_id != pipeline_id || out.back().device != device) {
            close_group();
            DeviceStats g;
            g.pipeline_id = pipeline_id;
            g.generator_name = q.text("generator_name");
            g.params = q.text("params");
            g.gpu = q.text("gpu");
            g.device = device;
            out.push_back(std::move(g));
        }
        DeviceStats &g = out.back();
        const int64_t run_id = q.integer("run_id");
        if (g.runs.empty() || g.runs.back().run_id != run_id) {
            RunRankCorrelation rc;
            rc.run_id = run_id;
            rc.mode = q.text("mode");
            rc.autoscheduler = q.text("autoscheduler");
            g.runs.push_back(rc);
        }
        const std::string status = q.text("status"), benchmark = q.text("benchmark");
        const auto predicted = q.optional_real("predicted_cost"),
                   runtime = q.optional_real("runtime_median_ms");
        ++g.samples;
        if (q.integer("spills")) ++g.spilled;
        const bool measured = is_measured(status, q.text("validation"), runtime);
        if (measured) {
            ++g.measured;
            times.push_back(*runtime);
            if (predicted) {
                pairs[run_id].first.push_back(*predicted);
                pairs[run_id].second.push_back(*runtime);
            }
        } else if (status != "ok" || (!benchmark.empty() && benchmark != "measured")) {
            ++g.failed;
        }
    }
    close_group();
    return out;
}

int64_t SampleStore::record_weights(const WeightsRecord &w) {
    auto ins =
        db_.prepare("INSERT INTO weights (path, checksum, provenance, trained_on) VALUES (?1, ?2, ?3, ?4)");
    ins.bind(1, w.path).bind(2, w.checksum).bind(3, w.provenance).bind(4, w.trained_on).run();
    return db_.last_insert_id();
}

std::string SampleStore::weights_path(int64_t weights_id) {
    auto q = db_.prepare("SELECT path FROM weights WHERE id = ?1");
    q.bind(1, weights_id);
    return q.step() ? q.text("path") : std::string();
}

std::optional<StoredRun> SampleStore::find_run(int64_t run_id) {
    auto q = db_.prepare(R"sql(
        SELECT r.id, r.pipeline_id, r.mode, r.status, r.config, r.stopped_by, p.generator_path, p.generator_hash,
               p.generator_name, p.params, p.target, p.gpu
        FROM runs r JOIN pipelines p ON p.id = r.pipeline_id WHERE r.id = ?1)sql");
    q.bind(1, run_id);
    if (!q.step()) return std::nullopt;
    StoredRun r;
    r.id = q.integer("id");
    r.pipeline_id = q.integer("pipeline_id");
    r.mode = q.text("mode");
    r.status = q.text("status");
    r.config = q.text("config");
    r.stopped_by = q.optional_text("stopped_by");
    r.pipeline.generator_path = q.text("generator_path");
    r.pipeline.generator_hash = q.text("generator_hash");
    r.pipeline.generator_name = q.text("generator_name");
    r.pipeline.params = q.text("params");
    r.pipeline.target = q.text("target");
    r.pipeline.gpu = q.text("gpu");
    return r;
}

void SampleStore::set_run_status(int64_t run_id, const std::string &status,
                                 const std::optional<std::string> &stopped_by, const std::string &error) {
    auto up =
        db_.prepare("UPDATE runs SET status = ?2, stopped_by = ?3, error = ?4, finished_at = CASE WHEN ?2 = "
                    "'running' THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END WHERE id = ?1");
    up.bind(1, run_id).bind(2, status).bind(3, stopped_by);
    if (error.empty())
        up.bind_null(4);
    else
        up.bind(4, error);
    up.run();
}

void SampleStore::begin_batch(int64_t run_id, int batch, std::optional<int64_t> weights_id) {
    auto ins = db_.prepare("INSERT OR IGNORE INTO autotune_batches (run_id, batch, weights_id, status) "
                           "VALUES (?1, ?2, ?3, 'running')");
    ins.bind(1, run_id).bind(2, batch).bind(3, weights_id).run();
}

void SampleStore::update_batch(const AutotuneBatchRow &b) {
    auto up = db_.prepare(
        "UPDATE autotune_batches SET status = ?3, samples = ?4, measured = ?5, failed = ?6, spilled = ?7, "
        "best_ms = ?8, spearman = ?9, kendall = ?10, regret = ?11, retrain_s = ?12, finished_at = CASE WHEN "
        "?3 = "
        "'finished' THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ELSE NULL END WHERE run_id = ?1 AND batch = "
        "?2");
    up.bind(1, b.run_id).bind(2, b.batch).bind(3, b.status).bind(4, b.samples).bind(5, b.measured);
    up.bind(6, b.failed).bind(7, b.spilled).bind(8, b.best_ms).bind(9, b.spearman).bind(10, b.kendall);
    up.bind(11, b.regret).bind(12, b.retrain_s).run();
}

std::vector<AutotuneBatchRow> SampleStore::autotune_batches(int64_t run_id) {
    auto q =
        db_.prepare("SELECT b.run_id, b.batch, b.weights_id, coalesce(w.path, '') AS weights_path, b.status, "
                    "b.samples, b.measured, b.failed, b.spilled, b.best_ms, b.spearman, b.kendall, b.regret, "
                    "b.retrain_s FROM autotune_batches b "
                    "LEFT JOIN weights w ON w.id = b.weights_id WHERE b.run_id = ?1 ORDER BY b.batch");
    q.bind(1, run_id);
    std::vector<AutotuneBatchRow> out;
    while (q.step()) {
        AutotuneBatchRow b;
        b.run_id = q.integer("run_id");
        b.batch = static_cast<int>(q.integer("batch"));
        b.weights_id = q.optional_integer("weights_id");
        b.weights_path = q.text("weights_path");
        b.status = q.text("status");
        b.samples = q.integer("samples");
        b.measured = q.integer("measured");
        b.failed = q.integer("failed");
        b.spilled = q.integer("spilled");
        b.best_ms = q.optional_real("best_ms");
        b.spearman = q.optional_real("spearman");
        b.kendall = q.optional_real("kendall");
        b.regret = q.optional_real("regret");
        b.retrain_s = q.optional_real("retrain_s");
        out.push_back(std::move(b));
    }
    return out;
}

std::vector<SampleStore::StoredSampleState> SampleStore::batch_samples(int64_t run_id, int batch) {
    auto q = db_.prepare(R"sql(
        SELECT s.idx, s.id, (s.status != 'ok' OR s.benchmark IS NOT NULL) AS complete, s.status,
               (s.benchmark IS NOT NULL) AS benchmarked, s.validation, s.predicted_cost, s.runtime_median_ms,
               EXISTS (SELECT 1 FROM kernels k WHERE k.sample_id = s.id
                       AND k.spill_store_bytes + k.spill_load_bytes > 0) AS spills
        FROM samples s WHERE s.run_id = ?1 AND s.batch = ?2 ORDER BY s.idx)sql");
    q.bind(1, run_id).bind(2, batch);
    std::vector<StoredSampleState> out;
    while (q.step()) {
        StoredSampleState s;
        s.idx = static_cast<int>(q.integer("idx"));
        s.id = q.integer("id");
        s.complete = q.integer("complete") != 0;
        const std::string status = q.text("status");
        s.failed = status != "ok";
        s.predicted_cost = q.optional_real("predicted_cost");
        s.runtime_ms = q.optional_real("runtime_median_ms");
        s.measured = is_measured(status, q.text("validation"), s.runtime_ms);
        s.compiled = !s.failed || q.integer("benchmarked") != 0;
        s.spilled = q.integer("spills") != 0;
        out.push_back(s);
    }
    return out;
}

} // namespace gpusched::db
