#pragma once
// Measured samples as the cost model trains on them: one group per pipeline,
// whose stage list is the union of its samples' stages. A schedule that
// splits a reduction across threads (core/reduction_split.h) adds the
// split's intermediate as a stage, so its sample carries other stages than
// the same pipeline's unsplit ones; each sample's rows are renumbered into
// the union (the network judges each stage by its own features alone, so a
// sample's prediction does not change). Within a group the loss compares
// every pair, split against unsplit too: on an H100, histogram_equalize's
// unsplit samples ran 10-30x slower than its split ones at the same
// predicted cost, and only that comparison can teach it. (Before, such a
// pipeline was refused: "a different stage count than its pipeline's other
// samples", and Autotune never retrained it.)

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "costmodel/training.h"
#include "db/sample_store.h"

namespace gpusched {

struct TrainingGroup {
    int64_t pipeline_id = 0;
    PipelineSamples samples;           // named "<generator> <params> on <gpu>"
    std::vector<std::size_t> measured; // per state: its index in the measured samples given
};

// The devices the samples were measured on ("(unnamed)" for none), added
// to `devices`; refuse_mixed_devices() then throws a UserError naming them
// when there are several: times of two devices never train one model.
void add_measuring_devices(const std::vector<db::MeasuredSample> &measured, std::set<std::string> &devices);
// `where` follows "the samples" in the message (" in 'FILE'", or empty).
void refuse_mixed_devices(const std::set<std::string> &devices, const std::string &where);

// Groups in the order of their first sample; a featurization that does not
// parse is a UserError naming the sample and `source` (the database).
std::vector<TrainingGroup> group_for_training(const std::vector<db::MeasuredSample> &measured,
                                              const std::string &source);

} // namespace gpusched
