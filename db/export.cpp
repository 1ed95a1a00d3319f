#include "db/export.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusched::db {
namespace {

std::string csv_escape(const std::string &v) {
    if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
    std::string out = "\"";
    for (char c : v) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

} // namespace

std::string export_samples(Database &db, ExportFormat format, std::optional<int64_t> run_id) {
    std::string sql = R"sql(
        SELECT s.id AS sample_id, s.run_id, p.generator_name, p.params, p.target, p.gpu, r.mode, r.autoscheduler,
               s.batch, s.idx, s.seed, s.predicted_cost, s.gpu_fill, s.gpu_fill_least, s.autoschedule_s, s.compile_s,
               s.ptxas_status,
               (SELECT coalesce(max(registers), 0) FROM kernels k WHERE k.sample_id = s.id) AS max_registers,
               (SELECT coalesce(sum(spill_store_bytes + spill_load_bytes), 0) FROM kernels k
                 WHERE k.sample_id = s.id) AS spill_bytes,
               (SELECT count(*) FROM kernels k WHERE k.sample_id = s.id) AS kernels,
               s.device, s.benchmark, s.runtime_min_ms, s.runtime_median_ms, s.runtime_reps, s.validation, s.validation_detail, s.status, s.error,
               length(s.featurization) AS featurization_bytes, s.created_at
        FROM samples s JOIN runs r ON r.id = s.run_id JOIN pipelines p ON p.id = r.pipeline_id)sql";
    if (run_id) sql += " WHERE s.run_id = ?1";
    sql += " ORDER BY s.id";
    auto q = db.prepare(sql);
    if (run_id) q.bind(1, *run_id);

    std::ostringstream out;
    nlohmann::json rows = nlohmann::json::array();
    bool header_done = false;
    // Every column the query returns, in its order, under its own name.
    const std::vector<std::string> columns = q.column_names();
    while (q.step()) {
        if (format == ExportFormat::Csv) {
            if (!header_done) {
                for (std::size_t c = 0; c < columns.size(); ++c)
                    out << (c ? "," : "") << columns[c];
                out << "\n";
                header_done = true;
            }
            for (std::size_t c = 0; c < columns.size(); ++c)
                out << (c ? "," : "") << csv_escape(q.optional_text(columns[c]).value_or(""));
            out << "\n";
        } else {
            nlohmann::json row;
            for (const std::string &name : columns) {
                const std::optional<std::string> value = q.optional_text(name);
                if (!value)
                    row[name] = nullptr;
                else if (name == "params")
                    row[name] = nlohmann::json::parse(*value, nullptr, false);
                else
                    row[name] = *value;
            }
            for (const char *numeric : {"sample_id", "run_id", "batch", "idx", "seed", "max_registers",
                                        "spill_bytes", "kernels", "featurization_bytes", "runtime_reps"}) {
                if (row.contains(numeric) && row[numeric].is_string())
                    row[numeric] = std::stoll(row[numeric].get<std::string>());
            }
            for (const char *real : {"predicted_cost", "gpu_fill", "gpu_fill_least", "autoschedule_s",
                                     "compile_s", "runtime_min_ms", "runtime_median_ms"}) {
                if (row.contains(real) && row[real].is_string())
                    row[real] = std::stod(row[real].get<std::string>());
            }
            rows.push_back(std::move(row));
        }
    }
    if (format == ExportFormat::Json) out << rows.dump(2) << "\n";
    return out.str();
}

} // namespace gpusched::db
