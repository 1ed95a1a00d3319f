#include "tuner/modes/retrain.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "costmodel/crc32.h"
#include "costmodel/default_weights.h"
#include "costmodel/weights_file.h"
#include "db/sample_store.h"
#include "tuner/modes/oneshot.h"
#include "tuner/modes/training_groups.h"
#include "tuner/report_stamp.h"

namespace gpusched {

namespace {

std::string file_crc32(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    const std::string bytes = s.str();
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc32(bytes.data(), bytes.size()));
    return hex;
}

} // namespace

RetrainResult retrain_from_database(const RetrainOptions &opt) {
    if (opt.output_path.empty()) throw UserError("retrain needs an output weights path (-o)");
    if (opt.epochs < 1) throw UserError("--epochs must be at least 1");
    if (!std::ifstream(opt.db_path)) throw UserError("database '" + opt.db_path + "' does not exist");
    db::Database database = db::Database::open(opt.db_path);
    return retrain_from_database(opt, database);
}

RetrainResult retrain_from_database(const RetrainOptions &opt, db::Database &database) {
    if (opt.output_path.empty()) throw UserError("retrain needs an output weights path (-o)");
    if (opt.epochs < 1) throw UserError("--epochs must be at least 1");
    db::SampleStore store(database);
    db::TrainingFilter filter;
    filter.generator_name = opt.generator_name;
    filter.device = opt.device;
    filter.run_id = opt.run_id;
    filter.pipeline_id = opt.pipeline_id;
    filter.exclude_pipeline_ids = opt.exclude_pipeline_ids;
    const auto measured = store.measured_samples(filter);
    if (opt.device.empty()) {
        std::set<std::string> devices;
        add_measuring_devices(measured, devices);
        refuse_mixed_devices(devices, " in '" + opt.db_path + "'");
    }

    // One group per pipeline and stage structure (training_groups.h).
    std::vector<PipelineSamples> data;
    std::vector<int64_t> sample_ids;
    for (TrainingGroup &g : group_for_training(measured, opt.db_path)) {
        if (g.samples.states.size() < 2) continue;
        for (std::size_t i : g.measured)
            sample_ids.push_back(measured[i].sample_id);
        data.push_back(std::move(g.samples));
    }
    if (data.empty()) {
        throw UserError("no pipeline in '" + opt.db_path + "'" +
                        (opt.generator_name.empty() ? "" : " named '" + opt.generator_name + "'") +
                        " has two or more benchmarked samples with featurizations to train on "
                        "(benchmarks come from `gpusched tune` on a GPU)");
    }

    WeightsFile start =
        opt.initial_weights.empty() ? default_weights() : read_weights_file(opt.initial_weights);
    TrainingOptions training;
    training.epochs = opt.epochs;
    training.learning_rate = opt.learning_rate;
    training.seed = opt.seed;
    training.formula = formula_context_for(opt.gpu);
    training.initial_formula_version = start.formula_version;

    RetrainResult result;
    result.pipelines = static_cast<int>(data.size());
    for (const auto &p : data)
        result.samples += static_cast<int>(p.states.size());
    if (opt.keep_start_unless_better) {
        result.check = cross_validate_retraining(start.weights, data, training);
        if (result.check->keep_start()) {
            result.kept_start = true;
            return result;
        }
    }
    NetworkWeights weights = start.weights;
    result.report = train_network(weights, data, training);

    std::ostringstream prov;
    prov << "retrained by " << opt.purpose << " at " << utc_iso8601() << " on " << result.samples
         << " measured samples of " << result.pipelines << " pipelines from " << opt.db_path
         << " (GPU profile " << opt.gpu.name << ", " << opt.epochs << " epochs, seed " << opt.seed
         << "), starting from: " << start.provenance
         << "; validation before: " << describe(result.report.validation_before)
         << "; after: " << describe(result.report.validation_after);
    if (result.check) prov << "; adopted after " << describe(*result.check);
    result.provenance = prov.str();
    write_weights_file(opt.output_path, WeightsFile{weights, result.provenance});

    nlohmann::json trained_on = {{"samples", sample_ids},
                                 {"gpu", opt.gpu.name},
                                 {"epochs", opt.epochs},
                                 {"device", measured.empty() ? opt.device : measured.front().device},
                                 {"by", opt.purpose}};
    if (opt.run_id) trained_on["run_id"] = opt.run_id;
    if (opt.pipeline_id) trained_on["pipeline_id"] = opt.pipeline_id;
    if (!opt.held_out.empty()) {
        trained_on["held_out"] = opt.held_out;
        trained_on["excluded_pipeline_ids"] = opt.exclude_pipeline_ids;
    }
    result.weights_id = store.record_weights(
        {opt.output_path, file_crc32(opt.output_path), result.provenance, trained_on.dump()});
    return result;
}

} // namespace gpusched
