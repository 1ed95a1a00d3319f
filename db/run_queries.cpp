#include "db/run_queries.h"

#include "db/measured.h"

namespace gpusched::db {

std::optional<SettledBaseline> RunQueries::settled_baseline(int64_t of_run,
                                                            const std::string &autoscheduler) {
    auto q = db_.prepare(
        "SELECT r.id, s.id, r.status, s.runtime_median_ms, coalesce(r.error, '') FROM runs r JOIN samples s "
        "ON s.run_id = r.id WHERE json_extract(r.config, '$.baseline_of_run') = ?1 AND r.autoscheduler = ?2 "
        "AND r.status IN ('finished', 'failed') ORDER BY r.id DESC LIMIT 1");
    q.bind(1, of_run).bind(2, autoscheduler);
    if (!q.step()) return std::nullopt;
    SettledBaseline b;
    b.run_id = q.column_int(0);
    b.sample_id = q.column_int(1);
    b.finished = q.column_text(2) == "finished";
    if (b.finished)
        b.median_ms = q.column_optional_double(3);
    else
        b.error = q.column_text(4);
    return b;
}

int64_t RunQueries::sample_count(int64_t run_id) {
    auto q = db_.prepare("SELECT count(*) FROM samples WHERE run_id = ?1");
    q.bind(1, run_id);
    q.step();
    return q.column_int(0);
}

std::optional<double> RunQueries::fastest_measured_ms(int64_t run_id) {
    auto q =
        db_.prepare(std::string("SELECT min(s.runtime_median_ms) FROM samples s WHERE s.run_id = ?1 AND ") +
                    kMeasuredSample);
    q.bind(1, run_id);
    q.step();
    return q.column_optional_double(0);
}

std::optional<FastestSample> RunQueries::fastest_measured_sample(int64_t run_id) {
    auto q = db_.prepare(std::string("SELECT s.id, s.batch, s.idx, s.runtime_median_ms FROM samples s "
                                     "WHERE s.run_id = ?1 AND ") +
                         kMeasuredSample + " ORDER BY s.runtime_median_ms, s.id LIMIT 1");
    q.bind(1, run_id);
    if (!q.step()) return std::nullopt;
    return FastestSample{q.column_int(0), static_cast<int>(q.column_int(1)),
                         static_cast<int>(q.column_int(2)), q.column_double(3)};
}

RunTally RunQueries::tally(int64_t run_id) {
    auto q =
        db_.prepare(std::string("SELECT count(*), sum(") + kMeasuredSample +
                    "), sum(s.status != 'ok'), sum(EXISTS (SELECT 1 FROM kernels k WHERE k.sample_id = s.id "
                    "AND k.spill_store_bytes + k.spill_load_bytes > 0)) FROM samples s WHERE s.run_id = ?1");
    q.bind(1, run_id);
    q.step();
    RunTally t;
    t.samples = q.column_int(0);
    t.measured = q.column_optional_int(1).value_or(0);
    t.failed = q.column_optional_int(2).value_or(0);
    t.spilled = q.column_optional_int(3).value_or(0);
    return t;
}

std::optional<ChosenSampleTime> RunQueries::chosen_sample_time(int64_t run_id) {
    auto q = db_.prepare("SELECT s.id, s.runtime_median_ms, s.runtime_min_ms, coalesce(s.runtime_reps, 0), "
                         "coalesce(s.device, '') FROM runs r JOIN samples s ON s.id = r.best_sample_id "
                         "WHERE r.id = ?1 AND s.runtime_median_ms > 0");
    q.bind(1, run_id);
    if (!q.step()) return std::nullopt;
    return ChosenSampleTime{q.column_int(0), q.column_double(1), q.column_optional_double(2), q.column_int(3),
                            q.column_text(4)};
}

std::vector<TaggedRun> RunQueries::runs_started_by(const std::string &tag, const std::string &device) {
    auto q = db_.prepare(R"sql(
        SELECT r.id, r.mode, r.status, coalesce(r.stopped_by, ''), p.generator_hash, r.config
        FROM runs r JOIN pipelines p ON p.id = r.pipeline_id
        WHERE json_extract(r.config, '$.started_by') = ?1 AND json_extract(r.config, '$.device') = ?2
        ORDER BY r.id DESC)sql");
    q.bind(1, tag).bind(2, device);
    std::vector<TaggedRun> out;
    while (q.step())
        out.push_back({q.column_int(0), q.column_text(1), q.column_text(2), q.column_text(3),
                       q.column_text(4), q.column_text(5)});
    return out;
}

std::vector<int64_t> RunQueries::pipeline_ids(const std::string &generator_name, const std::string &params) {
    auto q = db_.prepare("SELECT id FROM pipelines WHERE generator_name = ?1 AND params = ?2 ORDER BY id");
    q.bind(1, generator_name).bind(2, params);
    std::vector<int64_t> ids;
    while (q.step())
        ids.push_back(q.column_int(0));
    return ids;
}

} // namespace gpusched::db
