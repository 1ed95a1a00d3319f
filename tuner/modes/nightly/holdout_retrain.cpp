#include "tuner/modes/nightly/holdout_retrain.h"

#include <filesystem>

#include "common/errors.h"
#include "db/database.h"
#include "db/run_queries.h"
#include "tuner/modes/retrain.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

// Every pipeline row of this generator and params.
std::vector<int64_t> pipeline_rows(const std::string &db_path, const HoldoutPipeline &p) {
    db::Database database = db::Database::open(db_path);
    return db::RunQueries(database).pipeline_ids(p.generator_name, p.params);
}

TrainedModel train(const HoldoutRequest &r, const std::string &held_out, const std::vector<int64_t> &excluded,
                   const std::string &file) {
    TrainedModel m;
    m.held_out = held_out;
    m.path = (fs::path(r.out_dir) / file).string();
    RetrainOptions o;
    o.db_path = r.db_path;
    o.output_path = m.path;
    o.gpu = r.gpu;
    o.device = r.device;
    o.exclude_pipeline_ids = excluded;
    o.held_out = held_out;
    o.purpose = r.purpose +
                (held_out.empty() ? ": every pipeline on " : ": holding out " + held_out + " on ") + r.device;
    o.epochs = r.epochs;
    o.learning_rate = r.learning_rate;
    o.seed = r.seed;
    try {
        const RetrainResult res = retrain_from_database(o);
        m.weights_id = res.weights_id;
        m.samples = res.samples;
        m.pipelines = res.pipelines;
    } catch (const UserError &e) {
        m.error = e.what();
    }
    return m;
}

} // namespace

std::vector<TrainedModel> retrain_hold_one_out(const HoldoutRequest &r) {
    fs::create_directories(r.out_dir);
    std::vector<TrainedModel> models;
    models.push_back(train(r, "", {}, "all.weights"));
    for (const auto &p : r.pipelines)
        models.push_back(train(r, p.name, pipeline_rows(r.db_path, p), "without-" + p.name + ".weights"));
    return models;
}

} // namespace gpusched
