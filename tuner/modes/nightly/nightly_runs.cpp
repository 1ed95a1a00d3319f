#include "tuner/modes/nightly/nightly_runs.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/run_queries.h"
#include "tuner/generate/batch.h"

namespace gpusched {

std::string nightly_run_tag(const NightlyPipeline &p) {
    return "nightly " + p.name;
}

NightlyRunHistory nightly_run_history(const std::string &db_path, const NightlyPipeline &p) {
    NightlyRunHistory h;
    if (!std::filesystem::exists(db_path)) return h;
    db::Database database = db::Database::open(db_path);
    bool newest = true;
    const std::string hash = hash_file(p.generator_path);
    for (const db::TaggedRun &run :
         db::RunQueries(database).runs_started_by(nightly_run_tag(p), std::string(to_string(p.device)))) {
        ++h.earlier_runs;
        if (!newest) continue;
        newest = false;
        const bool unfinished = run.status == "running" || run.status == "interrupted" ||
                                (run.status == "finished" && !run.stopped_by.empty());
        if (run.mode != "autotune" || !unfinished || p.mode != NightlyMode::Autotune) continue;
        const std::string which = "run " + std::to_string(run.id) + " (" + run.status +
                                  (run.stopped_by.empty() ? "" : ", stopped by the " + run.stopped_by) + ")";
        const nlohmann::json c = nlohmann::json::parse(run.config, nullptr, false);
        if (run.generator_hash != hash)
            h.not_resumed = which + " tuned another build of the generator";
        else if (!c.is_object() || c.value("batch", -1) != p.samples ||
                 c.value("iterations", -1) != p.iterations)
            h.not_resumed = which + " has another batch size or iteration count than the config";
        else
            h.resume_run = run.id;
    }
    return h;
}

} // namespace gpusched
