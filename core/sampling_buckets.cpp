#include "core/sampling_buckets.h"

#include <cstdint>
#include <map>

namespace gpusched {

SamplingBuckets sampling_buckets(const RootTilingOptions &options, int depth) {
    const size_t k = options.loops.size();
    // What func_structural_hash mixes of a size at this depth
    // (core/search_space.cpp): the options differ only in these sizes, the
    // rest of the decision is the parent's.
    auto thread_key = [&](int64_t v) { return depth >= 4 ? v : static_cast<int64_t>(v > 1); };
    auto serial_key = [&](int64_t v) { return depth >= 6 ? v : static_cast<int64_t>(v > 1); };
    std::map<std::vector<int64_t>, size_t> bucket_of;
    std::vector<std::vector<size_t>> buckets;
    std::vector<int64_t> key;
    for (size_t i = 0; i < options.size(); i++) {
        key.clear();
        if (depth >= 3) {
            for (size_t q = 0; q < k; q++)
                key.push_back(thread_key(options.thread[i * k + q]));
            for (size_t q = 0; q < k; q++)
                key.push_back(serial_key(options.serial[i * k + q]));
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
