#include "db/report_queries.h"

#include "db/measured.h"

namespace gpusched::db {

std::vector<ReportRunRow> ReportQueries::runs(std::optional<int64_t> run_id,
                                              const std::string &generator_name, const std::string &since) {
    auto q = db_.prepare(
        "SELECT r.id, r.pipeline_id, p.generator_name, p.params, p.target, p.gpu, r.mode, r.autoscheduler, "
        "r.status, r.started_at, coalesce(r.finished_at, ''), coalesce(r.stopped_by, ''), coalesce(r.error, "
        "''), "
        "r.best_sample_id FROM runs r JOIN pipelines p ON p.id = r.pipeline_id "
        "WHERE (?1 IS NULL OR r.id = ?1) AND (?2 = '' OR p.generator_name = ?2) "
        "AND (?3 = '' OR r.started_at >= ?3) ORDER BY r.started_at, r.id");
    q.bind(1, run_id).bind(2, generator_name).bind(3, since);
    std::vector<ReportRunRow> out;
    while (q.step()) {
        ReportRunRow r;
        r.id = q.column_int(0);
        r.pipeline_id = q.column_int(1);
        r.generator_name = q.column_text(2);
        r.params = q.column_text(3);
        r.target = q.column_text(4);
        r.gpu = q.column_text(5);
        r.mode = q.column_text(6);
        r.autoscheduler = q.column_text(7);
        r.status = q.column_text(8);
        r.started_at = q.column_text(9);
        r.finished_at = q.column_text(10);
        r.stopped_by = q.column_text(11);
        r.error = q.column_text(12);
        r.chosen_sample_id = q.column_optional_int(13);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<ReportSampleRow> ReportQueries::samples(int64_t run_id) {
    auto q = db_.prepare(
        "SELECT id, batch, idx, predicted_cost, runtime_median_ms, status, coalesce(benchmark, ''), "
        "validation, "
        "ptxas_status, coalesce(device, ''), coalesce(error, ''), coalesce(benchmark_detail, ''), "
        "coalesce(validation_detail, ''), coalesce(ptxas_detail, '') FROM samples WHERE run_id = ?1 "
        "ORDER BY batch, idx");
    q.bind(1, run_id);
    std::vector<ReportSampleRow> out;
    while (q.step()) {
        ReportSampleRow s;
        s.id = q.column_int(0);
        s.batch = static_cast<int>(q.column_int(1));
        s.idx = static_cast<int>(q.column_int(2));
        s.predicted_cost = q.column_optional_double(3);
        s.runtime_ms = q.column_optional_double(4);
        s.status = q.column_text(5);
        s.benchmark = q.column_text(6);
        s.validation = q.column_text(7);
        s.ptxas_status = q.column_text(8);
        s.device = q.column_text(9);
        s.error = q.column_text(10);
        s.benchmark_detail = q.column_text(11);
        s.validation_detail = q.column_text(12);
        s.ptxas_detail = q.column_text(13);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<SpillingKernel> ReportQueries::spilling_kernels(int64_t run_id) {
    auto q = db_.prepare("SELECT k.sample_id, k.name, k.spill_store_bytes, k.spill_load_bytes FROM kernels k "
                         "JOIN samples s ON s.id = k.sample_id WHERE s.run_id = ?1 AND k.spill_store_bytes + "
                         "k.spill_load_bytes > 0 ORDER BY k.sample_id, k.name");
    q.bind(1, run_id);
    std::vector<SpillingKernel> out;
    while (q.step())
        out.push_back({q.column_int(0), q.column_text(1), q.column_int(2), q.column_int(3)});
    return out;
}

std::optional<ScheduleRow> ReportQueries::schedule(int64_t sample_id) {
    auto q =
        db_.prepare("SELECT run_id, runtime_median_ms, predicted_cost, coalesce(schedule_source, ''), batch, "
                    "idx, gpu_fill, gpu_fill_least FROM samples WHERE id = ?1");
    q.bind(1, sample_id);
    if (!q.step()) return std::nullopt;
    ScheduleRow w;
    w.sample_id = sample_id;
    w.run_id = q.column_int(0);
    w.runtime_ms = q.column_optional_double(1);
    w.predicted_cost = q.column_optional_double(2);
    w.schedule_source = q.column_text(3);
    w.batch = static_cast<int>(q.column_int(4));
    w.idx = static_cast<int>(q.column_int(5));
    w.gpu_fill = q.column_optional_double(6);
    w.gpu_fill_least = q.column_optional_double(7);
    return w;
}

std::map<std::string, BaselineRunTime> ReportQueries::newest_baseline_times(int64_t pipeline_id,
                                                                            const std::string &device) {
    // Newest measured run first; its fastest sample (a baseline run holds one).
    auto q = db_.prepare(std::string("SELECT r.autoscheduler, r.id, min(s.runtime_median_ms) FROM runs r "
                                     "JOIN samples s ON s.run_id = r.id WHERE r.pipeline_id = ?1 AND "
                                     "s.device = ?2 AND r.autoscheduler != 'gpusched' AND ") +
                         kMeasuredSample + " GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC");
    q.bind(1, pipeline_id).bind(2, device);
    std::map<std::string, BaselineRunTime> out;
    while (q.step()) {
        const std::string source = q.column_text(0);
        if (!out.count(source)) out[source] = BaselineRunTime{q.column_int(1), q.column_double(2)};
    }
    return out;
}

} // namespace gpusched::db
