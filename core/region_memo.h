#pragma once
// Regions of Funcs computed below root (Block or Thread level), remembered
// across the loop-nest builds of one search.
//
// Such a region is a demand walk over the consumers in the kernel, and for a
// Func sized by its largest extent over the tile's starts (sized_by_max in
// core/loop_nest.h: reads through rounding divisions, or reads that move
// with the tile) kResidues walks, recursively through its consumers: on
// pyramids that made the search up to 20x slower (issue 30). Yet a search
// step changes one Func's decision, and a Func's region depends only on the
// decisions of the Funcs above it in its kernel and on which Funcs it is
// read through inline (LoopNest builds the key): most builds ask for regions
// an earlier build already computed. A sized_by_max Func's region at each
// tile shift is remembered the same way (its key leads with the negated
// shift), so a miss walks only its direct consumers, not their chains.
//
// And the loads each stage issues after inlining (core/effective_access.h),
// a function of the stage and which Funcs are inlined, asked for every stage
// featurized: most are featurized again with the same Funcs inlined.
//
// It also remembers what a stage reads at given loop bounds
// (LoopNest::demand): a function of the stage, the bounds and which Funcs
// are inlined, asked three times per stage featurized and by every region
// walk above; in a kernel of many Funcs most of its stages keep their bounds
// when one decision changes.
//
// The keys are the exact content those results depend on, compared whole
// (no hash-only match), so a hit returns what the build would compute and
// the search's results are the same with and without the memo. Memory is
// bounded: past max_bytes a table is emptied and starts over.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/effective_access.h"
#include "core/function_dag.h"
#include "core/words_hash.h"

namespace gpusched {

class RegionMemo {
public:
    explicit RegionMemo(size_t max_bytes = size_t(16) << 20) : max_bytes_(max_bytes) {}

    // The region stored under key, or null.
    const Region *find(const std::vector<int64_t> &key);
    void insert(const std::vector<int64_t> &key, const Region &region);

    // What a stage reads (LoopNest::demand) stored under key, or null;
    // shared, so a caller's copy outlives the table being emptied.
    using Demand = std::map<ProducerRef, Region>;
    std::shared_ptr<const Demand> find_demand(const std::vector<int64_t> &key);
    void insert_demand(const std::vector<int64_t> &key, std::shared_ptr<const Demand> demand);

    // A stage's loads after inlining stored under key, or null; shared like
    // the demands.
    std::shared_ptr<const EffectiveAccesses> find_accesses(const std::vector<int64_t> &key);
    void insert_accesses(const std::vector<int64_t> &key, std::shared_ptr<const EffectiveAccesses> accesses);

    int64_t hits = 0, misses = 0, resets = 0; // of the regions below root
    int64_t demand_hits = 0, demand_misses = 0;
    int64_t access_hits = 0, access_misses = 0;

private:
    std::unordered_map<std::vector<int64_t>, Region, WordsHash> regions_;
    std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Demand>, WordsHash> demands_;
    std::unordered_map<std::vector<int64_t>, std::shared_ptr<const EffectiveAccesses>, WordsHash> accesses_;
    size_t max_bytes_;
    size_t bytes_ = 0, demand_bytes_ = 0, access_bytes_ = 0;
};

} // namespace gpusched
