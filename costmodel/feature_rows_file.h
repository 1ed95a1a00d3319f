#pragma once
// The feature-rows file: a list of samples (featurization blobs) with the
// pipeline each belongs to and, when known, its runtime. It is the input of
// gpusched_fit_default_weights (which fills runtimes from the analytic
// teacher) and a plain exchange format for training sets dumped by the
// search or exported from the database.
//
// Layout (little-endian; docs/weights-format.md, "Feature-rows file"):
//   "GSFROWS1" | u32 version | u32 #records |
//   records: u32 pipeline key | f64 runtime ms (NaN = not measured) |
//            u32 blob size | featurization blob
// Records with the same pipeline key must carry identical pipeline features.
//
// Invariant: read_feature_rows returns pipelines with >= 1 sample each, in
// order of first appearance, or throws std::runtime_error naming the path,
// the record and what is wrong.

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/training.h"

namespace gpusched {

inline constexpr std::uint32_t kFeatureRowsVersion = 1;

struct FeatureRowsRecord {
    std::uint32_t pipeline_key = 0;
    double runtime_ms = 0; // NaN when not measured
    std::vector<PipelineFeatures> pipeline;
    StateFeatures state;
};

void write_feature_rows(const std::string &path, const std::vector<FeatureRowsRecord> &records);

// Groups records into PipelineSamples (name "pipeline <key>"); runtimes are
// copied as stored (NaN where unmeasured).
std::vector<PipelineSamples> read_feature_rows(const std::string &path);

} // namespace gpusched
