#pragma once
// The settings of a batch's searches: the beam search's size and passes,
// the base seed, and the greedy samples' dropout. One value type for every
// mode that searches (oneshot, top5, autotune, nightly, fuzz), with one JSON
// form (a run's stored config, which a resume reads back) and one set of
// command-line options (cli/search_args.h), so the modes cannot drift apart
// in names or defaults. The plugin's own SearchConfig (core/beam_search.h)
// is what each sample's search receives from these.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/search_defaults.h"

namespace gpusched {

struct SearchSettings {
    int beam_size = kDefaultBeamSize; // the beam search's sample (greedy samples: 1)
    int passes = kDefaultPasses;      // the beam search's sample (greedy samples: 1)
    uint64_t seed = 0;                // sample i searches with seed + i
    // Probability of dropping each ranked child in greedy samples. The
    // reference autotuner keeps the overall best path with 1% probability;
    // over the ~20 decisions of a typical app that is ~0.2 per decision.
    double greedy_dropout = 0.2;
};

// Writes them into a run's config under the keys runs have always stored
// them by: beam_size, passes, seed, dropout.
void write_search_settings(const SearchSettings &s, nlohmann::json &config);
// Reads them back; throws nlohmann::json::exception for a missing or
// mistyped key.
SearchSettings read_search_settings(const nlohmann::json &config);

} // namespace gpusched
