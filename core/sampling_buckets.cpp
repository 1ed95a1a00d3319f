#include "core/sampling_buckets.h"

#include <cstdint>
#include <map>

namespace gpusched {

SamplingBuckets sampling_buckets(const RootTilingOptions &options, int depth) {
    const size_t k = options.loops.size();
    std::map<std::vector<int64_t>, size_t> bucket_of;
    std::vector<std::vector<size_t>> buckets;
    std::vector<int64_t> key;
    for (size_t i = 0; i < options.size(); i++) {
        // What the hash reads of this option's sizes: the options differ
        // only in these, the rest of the decision is the parent's.
        key.clear();
        if (structural_hash_reads_tiling(depth)) {
            for (size_t q = 0; q < k; q++)
                key.push_back(structural_thread_key(options.thread[i * k + q], depth));
            for (size_t q = 0; q < k; q++)
                key.push_back(structural_serial_key(options.serial[i * k + q], depth));
        }
        auto [it, fresh] = bucket_of.emplace(key, buckets.size());
        if (fresh) buckets.emplace_back();
        buckets[it->second].push_back(i);
    }
    SamplingBuckets b;
    b.starts.push_back(0);
    for (const auto &members : buckets) {
        b.members.insert(b.members.end(), members.begin(), members.end());
        b.starts.push_back(b.members.size());
    }
    return b;
}

} // namespace gpusched
