#pragma once
// The nightly's models, per measuring device, from every measured sample of
// the database on that device (tuner/modes/retrain.h's trainer):
//  - one trained on all of them;
//  - per pipeline of the night, one trained without that pipeline's samples
//    (hold-one-out, as the paper trains the model One Shot uses on a
//    pipeline it has never seen: Anderson et al. 2021, sec. 6). A
//    pipeline's samples are those of every pipeline row with its generator
//    name and params, whichever build or GPU profile measured them.
// Every file is recorded in the weights table with the sample ids it was
// trained on, the device, and which pipeline it held out.
//
// A model that cannot be trained (fewer than two samples of any pipeline
// left) is reported with the reason and does not stop the others.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/gpu_profile.h"

namespace gpusched {

struct HoldoutPipeline {
    std::string name; // the nightly pipeline
    std::string generator_name;
    std::string params; // canonical JSON (tuner/generate/batch.h canonical_params)
};

struct HoldoutRequest {
    std::string db_path;
    std::string device; // samples.device: a GPU's name or pocl-<cpu>
    GpuProfile gpu;     // the profile the samples were searched for
    std::vector<HoldoutPipeline> pipelines;
    std::string out_dir; // the weights files go here
    std::string purpose; // "nightly 2024-05-01T02:00:00Z", in each provenance
    int epochs = 100;
    double learning_rate = 1e-3;
    uint64_t seed = 1;
};

struct TrainedModel {
    std::string held_out; // the pipeline left out; empty: trained on all
    std::string path;
    std::optional<int64_t> weights_id; // none: not trained, see error
    int samples = 0, pipelines = 0;
    std::string error;
};

// The all-samples model first, then one per pipeline, in request order.
// Throws db::DbError for database problems only.
std::vector<TrainedModel> retrain_hold_one_out(const HoldoutRequest &request);

} // namespace gpusched
