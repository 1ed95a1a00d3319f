// gpusched_fit_default_weights: fits the cost-model network to the analytic
// GPU model (its "teacher") on feature rows, and writes a weights file whose
// provenance string says exactly how it was made. This is how the checked-in
// default weights are produced (docs/costmodel.md).
//
//   gpusched_fit_default_weights --rows FILE | --synthesize PIPELINES [--states-per-pipeline N]
//       [--rows-out FILE] [--gpu NAME] [--targets analytic|measured] [--epochs N]
//       [--learning-rate X] [--batch-size N] [--seed N] [--init WEIGHTS] --out WEIGHTS
//
// --rows reads a feature-rows file (docs/weights-format.md); --synthesize
// makes rows with tools/synthetic_states (and --rows-out saves them).
// --targets analytic (default) replaces runtimes by the analytic model's
// predictions for --gpu; measured keeps the runtimes stored in the file.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "core/gpu_profile.h"
#include "costmodel/analytic_cost_model.h"
#include "costmodel/feature_rows_file.h"
#include "costmodel/tools/synthetic_states.h"
#include "costmodel/training.h"
#include "costmodel/weights_file.h"

using namespace gpusched;

namespace {

struct Args {
    std::string rows, rows_out, out, init, gpu = "h100", targets = "analytic";
    int synthesize = 0, states_per_pipeline = 64, epochs = 300, batch_size = 64;
    double learning_rate = 3e-3;
    unsigned long long seed = 1;
};

[[noreturn]] void usage(const std::string &why) {
    std::fprintf(stderr,
                 "error: %s\nusage: gpusched_fit_default_weights (--rows FILE | --synthesize PIPELINES "
                 "[--states-per-pipeline N] [--rows-out FILE]) [--gpu NAME] [--targets analytic|measured] "
                 "[--epochs N] [--learning-rate X] [--batch-size N] [--seed N] [--init WEIGHTS] --out WEIGHTS\n",
                 why.c_str());
    std::exit(2);
}

Args parse(int argc, char **argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(k + " needs a value");
            return argv[++i];
        };
        auto number = [&](const std::string &v) {
            char *end = nullptr;
            const double d = std::strtod(v.c_str(), &end);
            if (v.empty() || *end) usage(k + " needs a number, got \"" + v + "\"");
            return d;
        };
        if (k == "--rows") a.rows = value();
        else if (k == "--rows-out") a.rows_out = value();
        else if (k == "--out") a.out = value();
        else if (k == "--init") a.init = value();
        else if (k == "--gpu") a.gpu = value();
        else if (k == "--targets") a.targets = value();
        else if (k == "--synthesize") a.synthesize = int(number(value()));
        else if (k == "--states-per-pipeline") a.states_per_pipeline = int(number(value()));
        else if (k == "--epochs") a.epochs = int(number(value()));
        else if (k == "--batch-size") a.batch_size = int(number(value()));
        else if (k == "--learning-rate") a.learning_rate = number(value());
        else if (k == "--seed") a.seed = static_cast<unsigned long long>(number(value()));
        else usage("unknown argument " + k);
    }
    if (a.out.empty()) usage("--out is required");
    if (a.rows.empty() == (a.synthesize <= 0)) usage("give exactly one of --rows and --synthesize");
    if (a.targets != "analytic" && a.targets != "measured") usage("--targets must be analytic or measured");
    return a;
}

void progress(int epoch, double loss, void *) {
    if (epoch % 25 == 0) std::fprintf(stderr, "epoch %d: training loss %.5g\n", epoch, loss);
}

} // namespace

int main(int argc, char **argv) {
    const Args a = parse(argc, argv);
    try {
        const auto gpu = find_builtin_gpu_profile(a.gpu);
        if (!gpu) usage("unknown --gpu " + a.gpu + " (known: " + builtin_gpu_profile_names() + ")");

        std::vector<PipelineSamples> data;
        std::string rows_origin;
        if (a.synthesize > 0) {
            std::mt19937_64 rng(a.seed);
            std::vector<FeatureRowsRecord> records;
            for (int p = 0; p < a.synthesize; ++p) {
                const SyntheticPipeline sp = random_synthetic_pipeline(rng);
                for (int s = 0; s < a.states_per_pipeline; ++s) {
                    FeatureRowsRecord r;
                    r.pipeline_key = static_cast<std::uint32_t>(p);
                    r.runtime_ms = NAN;
                    r.pipeline = sp.stages;
                    r.state = random_synthetic_state(sp, *gpu, rng);
                    records.push_back(std::move(r));
                }
            }
            if (!a.rows_out.empty()) write_feature_rows(a.rows_out, records);
            rows_origin = "synthetic rows from costmodel/tools/synthetic_states (2-D stencil chains; seed " +
                          std::to_string(a.seed) + ", " + std::to_string(a.synthesize) + " pipelines x " +
                          std::to_string(a.states_per_pipeline) + " states)";
            // Round-trip through the file format so both paths train on identical data.
            if (!a.rows_out.empty()) data = read_feature_rows(a.rows_out);
            else {
                for (const auto &r : records) {
                    if (data.size() <= r.pipeline_key) data.push_back({"pipeline " + std::to_string(r.pipeline_key), r.pipeline, {}, {}});
                    data[r.pipeline_key].states.push_back(r.state);
                    data[r.pipeline_key].runtimes_ms.push_back(r.runtime_ms);
                }
            }
        } else {
            data = read_feature_rows(a.rows);
            rows_origin = "rows file " + a.rows;
        }

        std::size_t states = 0, rows = 0;
        for (auto &p : data) {
            states += p.states.size();
            for (const auto &s : p.states) rows += s.schedule.size();
            if (a.targets == "analytic") {
                AnalyticGpuCostModel teacher(*gpu);
                teacher.set_pipeline(p.stages);
                std::vector<const StateFeatures *> ptrs;
                for (const auto &s : p.states) ptrs.push_back(&s);
                teacher.evaluate(ptrs, p.runtimes_ms);
            }
        }

        NetworkWeights w = a.init.empty() ? NetworkWeights::initial(a.seed) : read_weights_file(a.init).weights;
        TrainingOptions opt;
        opt.epochs = a.epochs;
        opt.learning_rate = a.learning_rate;
        opt.batch_size = a.batch_size;
        opt.seed = a.seed;
        opt.formula = formula_context_for(*gpu);
        opt.progress = progress;
        const TrainingReport rep = train_network(w, data, opt);

        std::string prov = "gpusched_fit_default_weights: network fitted by Adam (lr " + std::to_string(a.learning_rate) +
                           ", batch " + std::to_string(a.batch_size) + ", " + std::to_string(a.epochs) + " epochs, seed " +
                           std::to_string(a.seed) + (a.init.empty() ? ", from NetworkWeights::initial" : ", from " + a.init) +
                           ") to " + (a.targets == "analytic" ? "the analytic GPU model's predictions for GPU profile " + gpu->name
                                                              : std::string("measured runtimes")) +
                           " on " + rows_origin + "; " + std::to_string(data.size()) + " pipelines, " +
                           std::to_string(states) + " states, " + std::to_string(rows) +
                           " stage rows; validation (20% held out) before: " + describe(rep.validation_before) +
                           "; after: " + describe(rep.validation_after);
        write_weights_file(a.out, WeightsFile{w, prov});
        std::printf("train before:      %s\ntrain after:       %s\nvalidation before: %s\nvalidation after:  %s\nwrote %s\n",
                    describe(rep.train_before).c_str(), describe(rep.train_after).c_str(),
                    describe(rep.validation_before).c_str(), describe(rep.validation_after).c_str(), a.out.c_str());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
