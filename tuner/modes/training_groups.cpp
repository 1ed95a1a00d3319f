#include "tuner/modes/training_groups.h"

#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "common/errors.h"
#include "costmodel/featurization_blob.h"

namespace gpusched {
namespace {

// The stages' features, byte for byte: equal keys, one stage list.
std::string structure_key(const std::vector<PipelineFeatures> &stages) {
    std::string key(stages.size() * sizeof(PipelineFeatures::values), '\0');
    for (std::size_t i = 0; i < stages.size(); ++i)
        std::memcpy(&key[i * sizeof(PipelineFeatures::values)], stages[i].values.data(),
                    sizeof(PipelineFeatures::values));
    return key;
}

} // namespace

std::vector<TrainingGroup> group_for_training(const std::vector<db::MeasuredSample> &measured,
                                              const std::string &source) {
    std::vector<TrainingGroup> groups;
    std::map<std::pair<int64_t, std::string>, std::size_t> index;
    std::map<int64_t, std::set<std::size_t>> structures; // pipeline -> its groups
    for (std::size_t i = 0; i < measured.size(); ++i) {
        const db::MeasuredSample &m = measured[i];
        FeaturizationSample f;
        try {
            f = deserialize_featurization(m.featurization.data(), m.featurization.size(),
                                          "featurization of sample " + std::to_string(m.sample_id));
        } catch (const std::exception &e) {
            throw UserError(std::string(e.what()) + " in '" + source + "'");
        }
        const auto key = std::make_pair(m.pipeline_id, structure_key(f.pipeline));
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, groups.size()).first;
            TrainingGroup g;
            g.pipeline_id = m.pipeline_id;
            g.samples.name = m.generator_name + " " + m.params + " on " + m.gpu;
            g.samples.stages = std::move(f.pipeline);
            groups.push_back(std::move(g));
            structures[m.pipeline_id].insert(it->second);
        }
        TrainingGroup &g = groups[it->second];
        g.samples.states.push_back(std::move(f.state));
        g.samples.runtimes_ms.push_back(m.runtime_ms);
        g.measured.push_back(i);
    }
    for (const auto &[pipeline, members] : structures)
        if (members.size() > 1)
            for (std::size_t g : members)
                groups[g].samples.name += " (" + std::to_string(groups[g].samples.stages.size()) + " stages)";
    return groups;
}

} // namespace gpusched
