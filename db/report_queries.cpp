#include "db/report_queries.h"

#include "db/measured.h"

namespace gpusched::db {

std::vector<ReportRunRow> ReportQueries::runs(std::optional<int64_t> run_id,
                                              const std::string &generator_name, const std::string &since) {
    auto q = db_.prepare(
        "SELECT r.id, r.pipeline_id, p.generator_name, p.params, p.target, p.gpu, r.mode, r.autoscheduler, "
        "r.status, r.started_at, coalesce(r.finished_at, '') AS finished_at, "
        "coalesce(r.stopped_by, '') AS stopped_by, coalesce(r.error, '') AS error, r.best_sample_id "
        "FROM runs r JOIN pipelines p ON p.id = r.pipeline_id "
        "WHERE (?1 IS NULL OR r.id = ?1) AND (?2 = '' OR p.generator_name = ?2) "
        "AND (?3 = '' OR r.started_at >= ?3) ORDER BY r.started_at, r.id");
    q.bind(1, run_id).bind(2, generator_name).bind(3, since);
    std::vector<ReportRunRow> out;
    while (q.step()) {
        ReportRunRow r;
        r.id = q.integer("id");
        r.pipeline_id = q.integer("pipeline_id");
        r.generator_name = q.text("generator_name");
        r.params = q.text("params");
        r.target = q.text("target");
        r.gpu = q.text("gpu");
        r.mode = q.text("mode");
        r.autoscheduler = q.text("autoscheduler");
        r.status = q.text("status");
        r.started_at = q.text("started_at");
        r.finished_at = q.text("finished_at");
        r.stopped_by = q.text("stopped_by");
        r.error = q.text("error");
        r.chosen_sample_id = q.optional_integer("best_sample_id");
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<ReportSampleRow> ReportQueries::samples(int64_t run_id) {
    auto q = db_.prepare(
        "SELECT id, batch, idx, predicted_cost, runtime_median_ms, status, "
        "coalesce(benchmark, '') AS benchmark, validation, ptxas_status, coalesce(device, '') AS device, "
        "coalesce(error, '') AS error, coalesce(benchmark_detail, '') AS benchmark_detail, "
        "coalesce(validation_detail, '') AS validation_detail, coalesce(ptxas_detail, '') AS ptxas_detail "
        "FROM samples WHERE run_id = ?1 ORDER BY batch, idx");
    q.bind(1, run_id);
    std::vector<ReportSampleRow> out;
    while (q.step()) {
        ReportSampleRow s;
        s.id = q.integer("id");
        s.batch = static_cast<int>(q.integer("batch"));
        s.idx = static_cast<int>(q.integer("idx"));
        s.predicted_cost = q.optional_real("predicted_cost");
        s.runtime_ms = q.optional_real("runtime_median_ms");
        s.status = q.text("status");
        s.benchmark = q.text("benchmark");
        s.validation = q.text("validation");
        s.ptxas_status = q.text("ptxas_status");
        s.device = q.text("device");
        s.error = q.text("error");
        s.benchmark_detail = q.text("benchmark_detail");
        s.validation_detail = q.text("validation_detail");
        s.ptxas_detail = q.text("ptxas_detail");
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
        out.push_back({q.integer("sample_id"), q.text("name"), q.integer("spill_store_bytes"),
                       q.integer("spill_load_bytes")});
    return out;
}

std::optional<ScheduleRow> ReportQueries::schedule(int64_t sample_id) {
    auto q = db_.prepare(
        "SELECT run_id, runtime_median_ms, predicted_cost, coalesce(schedule_source, '') AS schedule_source, "
        "batch, idx, gpu_fill, gpu_fill_least FROM samples WHERE id = ?1");
    q.bind(1, sample_id);
    if (!q.step()) return std::nullopt;
    ScheduleRow w;
    w.sample_id = sample_id;
    w.run_id = q.integer("run_id");
    w.runtime_ms = q.optional_real("runtime_median_ms");
    w.predicted_cost = q.optional_real("predicted_cost");
    w.schedule_source = q.text("schedule_source");
    w.batch = static_cast<int>(q.integer("batch"));
    w.idx = static_cast<int>(q.integer("idx"));
    w.gpu_fill = q.optional_real("gpu_fill");
    w.gpu_fill_least = q.optional_real("gpu_fill_least");
    return w;
}

std::map<std::string, BaselineRunTime> ReportQueries::newest_baseline_times(int64_t pipeline_id,
                                                                            const std::string &device) {
    // Newest measured run first; its fastest sample (a baseline run holds one).
    auto q = db_.prepare(
        std::string("SELECT r.autoscheduler, r.id, min(s.runtime_median_ms) AS fastest_ms FROM runs r "
                    "JOIN samples s ON s.run_id = r.id WHERE r.pipeline_id = ?1 AND "
                    "s.device = ?2 AND r.autoscheduler != 'gpusched' AND ") +
        kMeasuredSample + " GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC");
    q.bind(1, pipeline_id).bind(2, device);
    std::map<std::string, BaselineRunTime> out;
    while (q.step()) {
        const std::string source = q.text("autoscheduler");
        if (!out.count(source)) out[source] = BaselineRunTime{q.integer("id"), q.real("fastest_ms")};
    }
    return out;
}

} // namespace gpusched::db
