#include "db/run_queries.h"

#include "db/measured.h"

namespace gpusched::db {

std::optional<SettledBaseline> RunQueries::settled_baseline(int64_t of_run,
                                                            const std::string &autoscheduler) {
    auto q = db_.prepare("SELECT r.id AS run_id, s.id AS sample_id, r.status, s.runtime_median_ms, "
                         "coalesce(r.error, '') AS error FROM runs r JOIN samples s ON s.run_id = r.id WHERE "
                         "json_extract(r.config, '$.baseline_of_run') = ?1 AND r.autoscheduler = ?2 "
                         "AND r.status IN ('finished', 'failed') ORDER BY r.id DESC LIMIT 1");
    q.bind(1, of_run).bind(2, autoscheduler);
    if (!q.step()) return std::nullopt;
    SettledBaseline b;
    b.run_id = q.integer("run_id");
    b.sample_id = q.integer("sample_id");
    b.finished = q.text("status") == "finished";
    if (b.finished)
        b.median_ms = q.optional_real("runtime_median_ms");
    else
        b.error = q.text("error");
    return b;
}

int64_t RunQueries::sample_count(int64_t run_id) {
    auto q = db_.prepare("SELECT count(*) AS samples FROM samples WHERE run_id = ?1");
    q.bind(1, run_id);
    q.step();
    return q.integer("samples");
}

std::optional<double> RunQueries::fastest_measured_ms(int64_t run_id) {
    auto q = db_.prepare(
        std::string("SELECT min(s.runtime_median_ms) AS fastest_ms FROM samples s WHERE s.run_id = ?1 AND ") +
        kMeasuredSample);
    q.bind(1, run_id);
    q.step();
    return q.optional_real("fastest_ms");
}

std::optional<FastestSample> RunQueries::fastest_measured_sample(int64_t run_id) {
    auto q = db_.prepare(std::string("SELECT s.id, s.batch, s.idx, s.runtime_median_ms FROM samples s "
                                     "WHERE s.run_id = ?1 AND ") +
                         kMeasuredSample + " ORDER BY s.runtime_median_ms, s.id LIMIT 1");
    q.bind(1, run_id);
    if (!q.step()) return std::nullopt;
    return FastestSample{q.integer("id"), static_cast<int>(q.integer("batch")),
                         static_cast<int>(q.integer("idx")), q.real("runtime_median_ms")};
}

RunTally RunQueries::tally(int64_t run_id) {
    auto q = db_.prepare(std::string("SELECT count(*) AS samples, sum(") + kMeasuredSample +
                         ") AS measured, sum(s.status != 'ok') AS failed, "
                         "sum(EXISTS (SELECT 1 FROM kernels k WHERE k.sample_id = s.id "
                         "AND k.spill_store_bytes + k.spill_load_bytes > 0)) AS spilled "
                         "FROM samples s WHERE s.run_id = ?1");
    q.bind(1, run_id);
    q.step();
    RunTally t;
    t.samples = q.integer("samples");
    t.measured = q.optional_integer("measured").value_or(0);
    t.failed = q.optional_integer("failed").value_or(0);
    t.spilled = q.optional_integer("spilled").value_or(0);
    return t;
}

std::optional<ChosenSampleTime> RunQueries::chosen_sample_time(int64_t run_id) {
    auto q = db_.prepare("SELECT s.id, s.runtime_median_ms, s.runtime_min_ms, "
                         "coalesce(s.runtime_reps, 0) AS runtime_reps, coalesce(s.device, '') AS device "
                         "FROM runs r JOIN samples s ON s.id = r.best_sample_id "
                         "WHERE r.id = ?1 AND s.runtime_median_ms > 0");
    q.bind(1, run_id);
    if (!q.step()) return std::nullopt;
    return ChosenSampleTime{q.integer("id"), q.real("runtime_median_ms"), q.optional_real("runtime_min_ms"),
                            q.integer("runtime_reps"), q.text("device")};
}

std::vector<TaggedRun> RunQueries::runs_started_by(const std::string &tag, const std::string &device) {
    auto q = db_.prepare(R"sql(
        SELECT r.id, r.mode, r.status, coalesce(r.stopped_by, '') AS stopped_by, p.generator_hash, r.config
        FROM runs r JOIN pipelines p ON p.id = r.pipeline_id
        WHERE json_extract(r.config, '$.started_by') = ?1 AND json_extract(r.config, '$.device') = ?2
        ORDER BY r.id DESC)sql");
    q.bind(1, tag).bind(2, device);
    std::vector<TaggedRun> out;
    while (q.step())
        out.push_back({q.integer("id"), q.text("mode"), q.text("status"), q.text("stopped_by"),
                       q.text("generator_hash"), q.text("config")});
    return out;
}

std::vector<int64_t> RunQueries::pipeline_ids(const std::string &generator_name, const std::string &params) {
    auto q = db_.prepare("SELECT id FROM pipelines WHERE generator_name = ?1 AND params = ?2 ORDER BY id");
    q.bind(1, generator_name).bind(2, params);
    std::vector<int64_t> ids;
    while (q.step())
        ids.push_back(q.integer("id"));
    return ids;
}

} // namespace gpusched::db
