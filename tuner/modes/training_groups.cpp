#include "tuner/modes/training_groups.h"

#include <cstring>
#include <map>
#include <utility>

#include "common/errors.h"
#include "costmodel/featurization_blob.h"

namespace gpusched {
namespace {

// A stage's features, byte for byte: equal keys, one stage of the union.
std::string stage_key(const PipelineFeatures &stage) {
    std::string key(sizeof(PipelineFeatures::values), '\0');
    std::memcpy(&key[0], stage.values.data(), sizeof(PipelineFeatures::values));
    return key;
}

} // namespace

void add_measuring_devices(const std::vector<db::MeasuredSample> &measured, std::set<std::string> &devices) {
    for (const auto &m : measured)
        devices.insert(m.device.empty() ? "(unnamed)" : m.device);
}

void refuse_mixed_devices(const std::set<std::string> &devices, const std::string &where) {
    if (devices.size() < 2) return;
    std::string names;
    for (const auto &d : devices)
        names += (names.empty() ? "" : ", ") + d;
    throw UserError("the samples" + where + " were measured on " + std::to_string(devices.size()) +
                    " devices (" + names +
                    "); choose one with --device, times of different devices are never mixed");
}

std::vector<TrainingGroup> group_for_training(const std::vector<db::MeasuredSample> &measured,
                                              const std::string &source) {
    std::vector<TrainingGroup> groups;
    std::map<int64_t, std::size_t> group_of;
    std::vector<std::map<std::string, int>> union_index; // per group: stage key -> index in its stages
    for (std::size_t i = 0; i < measured.size(); ++i) {
        const db::MeasuredSample &m = measured[i];
        FeaturizationSample f;
        try {
            f = deserialize_featurization(m.featurization.data(), m.featurization.size(),
                                          "featurization of sample " + std::to_string(m.sample_id));
        } catch (const std::exception &e) {
            throw UserError(std::string(e.what()) + " in '" + source + "'");
        }
        auto it = group_of.find(m.pipeline_id);
        if (it == group_of.end()) {
            it = group_of.emplace(m.pipeline_id, groups.size()).first;
            TrainingGroup g;
            g.pipeline_id = m.pipeline_id;
            g.samples.name = m.generator_name + " " + m.params + " on " + m.gpu;
            groups.push_back(std::move(g));
            union_index.emplace_back();
        }
        TrainingGroup &g = groups[it->second];
        std::map<std::string, int> &index = union_index[it->second];
        // Renumber the sample's rows into the group's stages.
        std::vector<int> renumbered(f.pipeline.size());
        for (std::size_t s = 0; s < f.pipeline.size(); ++s) {
            const auto [at, added] =
                index.emplace(stage_key(f.pipeline[s]), static_cast<int>(g.samples.stages.size()));
            if (added) g.samples.stages.push_back(f.pipeline[s]);
            renumbered[s] = at->second;
        }
        for (int &id : f.state.stage_ids) {
            if (id < 0 || static_cast<std::size_t>(id) >= renumbered.size())
                throw UserError("featurization of sample " + std::to_string(m.sample_id) + " in '" + source +
                                "' has a row for stage " + std::to_string(id) + " of " +
                                std::to_string(renumbered.size()));
            id = renumbered[static_cast<std::size_t>(id)];
        }
        g.samples.states.push_back(std::move(f.state));
        g.samples.runtimes_ms.push_back(m.runtime_ms);
        g.measured.push_back(i);
    }
    return groups;
}

} // namespace gpusched
