#include "tuner/nightly/nightly_runs.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "db/database.h"
#include "tuner/batch.h"

namespace gpusched {

std::string nightly_run_tag(const NightlyPipeline &p) {
    return "nightly " + p.name;
}

NightlyRunHistory nightly_run_history(const std::string &db_path, const NightlyPipeline &p) {
    NightlyRunHistory h;
    if (!std::filesystem::exists(db_path)) return h;
    db::Database database = db::Database::open(db_path);
    auto q = database.prepare(R"sql(
        SELECT r.id, r.mode, r.status, coalesce(r.stopped_by, ''), p.generator_hash, r.config
        FROM runs r JOIN pipelines p ON p.id = r.pipeline_id
        WHERE json_extract(r.config, '$.started_by') = ?1 AND json_extract(r.config, '$.device') = ?2
        ORDER BY r.id DESC)sql");
    q.bind(1, nightly_run_tag(p)).bind(2, std::string(to_string(p.device)));
    bool newest = true;
    const std::string hash = hash_file(p.generator_path);
    while (q.step()) {
        ++h.earlier_runs;
        if (!newest) continue;
        newest = false;
        const int64_t id = q.column_int(0);
        const std::string mode = q.column_text(1), status = q.column_text(2), stopped_by = q.column_text(3);
        const bool unfinished =
            status == "running" || status == "interrupted" || (status == "finished" && !stopped_by.empty());
        if (mode != "autotune" || !unfinished || p.mode != NightlyMode::Autotune) continue;
        const std::string which = "run " + std::to_string(id) + " (" + status +
                                  (stopped_by.empty() ? "" : ", stopped by the " + stopped_by) + ")";
        const nlohmann::json c = nlohmann::json::parse(q.column_text(5), nullptr, false);
        if (q.column_text(4) != hash)
            h.not_resumed = which + " tuned another build of the generator";
        else if (!c.is_object() || c.value("batch", -1) != p.samples ||
                 c.value("iterations", -1) != p.iterations)
            h.not_resumed = which + " has another batch size or iteration count than the config";
        else
            h.resume_run = id;
    }
    return h;
}

} // namespace gpusched
