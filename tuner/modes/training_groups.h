#pragma once
// Measured samples as the cost model trains on them: one group per pipeline
// and stage structure. A schedule that splits a reduction across threads
// (core/reduction_split.h) adds the split's intermediate as a stage, so its
// samples carry other pipeline features than the same pipeline's unsplit
// ones; the network is evaluated against one list of stages per group, and
// the training loss compares samples within a group only. Grouping by
// pipeline alone refused every pipeline whose searches split some samples
// and not others (histogram_equalize on an H100: Autotune never retrained).

#include <cstddef>
#include <string>
#include <vector>

#include "costmodel/training.h"
#include "db/sample_store.h"

namespace gpusched {

struct TrainingGroup {
    int64_t pipeline_id = 0;
    PipelineSamples samples; // named "<generator> <params> on <gpu>", plus its stage count when split
    std::vector<std::size_t> measured; // per state: its index in the measured samples given
};

// Groups in the order of their first sample; a featurization that does not
// parse is a UserError naming the sample and `source` (the database).
std::vector<TrainingGroup> group_for_training(const std::vector<db::MeasuredSample> &measured,
                                              const std::string &source);

} // namespace gpusched
