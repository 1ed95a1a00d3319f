// gpusched_explain_cost: which terms of the cost formula make a schedule's
// predicted cost (issue 55's diagnosis: why the model prefers its pick to a
// baseline that ran faster). For each featurization file (a generator's
// NAME.featurization, or a sample's blob from the database) it evaluates
// the network as the search does and prints, as JSON, the predicted cost,
// each stage's cost, and each coefficient's contribution c_i x term_i
// summed over the stages, the formula's fixed part, and what is left over
// (float rounding only, where the terms are what the evaluator priced).
//
//   gpusched_explain_cost [--weights FILE] [--gpu NAME] FILE.featurization...
//
// Without --weights: the embedded defaults. --gpu: a built-in profile (the
// formula's wave size), default h100.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"
#include "costmodel/atomic_contention.h"
#include "costmodel/cost_formula.h"
#include "costmodel/default_weights.h"
#include "costmodel/featurization_blob.h"
#include "costmodel/network_evaluator.h"
#include "costmodel/weights_file.h"

namespace {

using namespace gpusched;

nlohmann::json explain(const FeaturizationSample &sample, const WeightsFile &weights, const GpuProfile &gpu) {
    FormulaContext ctx = formula_context_for(gpu);
    ctx.version = weights.formula_version;
    NetworkEvaluator eval(weights.weights, ctx);
    eval.set_pipeline(sample.pipeline);
    const std::size_t n = sample.state.stage_ids.size();
    std::vector<const ScheduleFeatures *> rows(n);
    for (std::size_t i = 0; i < n; i++)
        rows[i] = &sample.state.schedule[i];
    std::vector<double> costs(n);
    std::vector<float> coefficients(n * kNumCoefficients);
    eval.evaluate_rows(sample.state.stage_ids.data(), rows.data(), n, costs.data(), coefficients.data());

    std::vector<double> by_term(kNumCoefficients, 0.0);
    double fixed = 0, unexplained = 0, total = 0;
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t i = 0; i < n; i++) {
        CostTerms terms{};
        compute_cost_terms(sample.state.schedule[i], ctx, terms);
        double learned = 0;
        for (int k = 0; k < kNumCoefficients; k++) {
            const double part = static_cast<double>(coefficients[i * kNumCoefficients + k]) * terms[k];
            by_term[k] += part;
            learned += part;
        }
        // The formula's fixed part (version 3's atomic contention), which
        // no coefficient weighs; what the evaluator priced beyond the two
        // is left over (float rounding; anything else is a discrepancy).
        const PipelineFeatures &stage =
            sample.pipeline.at(static_cast<std::size_t>(sample.state.stage_ids[i]));
        const double stage_fixed = fixed_stage_cost_ms(sample.state.schedule[i], atomic_store_of(stage), ctx);
        fixed += stage_fixed;
        unexplained += costs[i] - learned - stage_fixed;
        total += costs[i];
        stages.push_back({{"stage", sample.state.stage_ids[i]}, {"cost", costs[i]}});
    }
    nlohmann::json terms = nlohmann::json::object();
    for (int k = 0; k < kNumCoefficients; k++)
        if (by_term[k] != 0) terms["c" + std::to_string(k)] = by_term[k];
    return {{"predicted_cost", total},
            {"fixed", fixed},
            {"unexplained", unexplained},
            {"terms", terms},
            {"stages", stages}};
}

} // namespace

int main(int argc, char **argv) {
    std::string weights_path, gpu_name = "h100";
    std::vector<std::string> files;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if ((a == "--weights" || a == "--gpu") && i + 1 < argc) {
            (a == "--weights" ? weights_path : gpu_name) = argv[++i];
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "usage: %s [--weights FILE] [--gpu NAME] FILE.featurization...\n", argv[0]);
            return 2;
        } else {
            files.push_back(a);
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s [--weights FILE] [--gpu NAME] FILE.featurization...\n", argv[0]);
        return 2;
    }
    try {
        const auto gpu = find_builtin_gpu_profile(gpu_name);
        if (!gpu) {
            std::fprintf(stderr, "error: unknown GPU '%s' (known: %s)\n", gpu_name.c_str(),
                         builtin_gpu_profile_names().c_str());
            return 2;
        }
        const WeightsFile weights =
            weights_path.empty() ? default_weights() : read_weights_file(weights_path);
        nlohmann::json out = nlohmann::json::array();
        for (const std::string &f : files) {
            std::ifstream in(f, std::ios::binary);
            if (!in) throw std::runtime_error("cannot read '" + f + "'");
            const std::vector<unsigned char> blob((std::istreambuf_iterator<char>(in)),
                                                  std::istreambuf_iterator<char>());
            nlohmann::json e = explain(deserialize_featurization(blob.data(), blob.size(), f), weights, *gpu);
            e["file"] = f;
            out.push_back(std::move(e));
        }
        std::cout << out.dump(1) << "\n";
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
