#pragma once
// The featurization blob: one sample's features as bytes. The plugin writes
// it as Halide's "featurization" output for the chosen schedule; the driver
// stores it in SQLite with the sample's measured runtime and feeds it back to
// training. It carries the pipeline features of every stage of the pipeline
// (a state's stage ids index them) and the state's schedule-feature rows.
//
// Layout (little-endian; docs/weights-format.md, "Featurization blob"):
//   "GSFB" | u32 blob version | u32 schedule layout version |
//   u32 pipeline layout version | u32 #schedule features | u32 #pipeline features |
//   u32 #stages | u32 #rows | stages x 280 f32 | rows x (i32 stage id, 75 f64) | u32 CRC-32
//
// Invariant: deserialize either returns a sample whose stage ids are in
// range and whose values are finite, or throws std::runtime_error naming the
// source and what is wrong (truncated, wrong magic/version/layout, bad
// checksum, out-of-range stage id, trailing bytes).

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace gpusched {

inline constexpr std::uint32_t kFeaturizationBlobVersion = 1;

struct FeaturizationSample {
    std::vector<PipelineFeatures> pipeline; // every stage of the pipeline
    StateFeatures state;
};

std::vector<unsigned char> serialize_featurization(const std::vector<PipelineFeatures> &pipeline,
                                                   const StateFeatures &state);
FeaturizationSample deserialize_featurization(const unsigned char *data, std::size_t size,
                                              const std::string &source = "featurization blob");

} // namespace gpusched
