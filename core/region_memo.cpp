#include "core/region_memo.h"

#include <utility>

namespace gpusched {

namespace {

// The value stored under key in one of the tables, or null, counted.
template <typename Table>
const typename Table::mapped_type *find_counted(Table &table, const std::vector<int64_t> &key, int64_t &hits,
                                                int64_t &misses) {
    auto it = table.find(key);
    if (it == table.end()) {
        misses++;
        return nullptr;
    }
    hits++;
    return &it->second;
}

// Stores value under key in one of the tables, whose entries so far take
// `used` of `max` bytes; past the bound the table is emptied first.
template <typename Table, typename Value>
void insert_bounded(Table &table, const std::vector<int64_t> &key, Value &&value, size_t bytes, size_t &used,
                    size_t max, int64_t &resets) {
    if (used + bytes > max) {
        table.clear();
        used = 0;
        resets++;
    }
    if (table.emplace(key, std::forward<Value>(value)).second) used += bytes;
}

} // namespace

const Region *RegionMemo::find(const std::vector<int64_t> &key) {
    return find_counted(regions_, key, hits, misses);
}

void RegionMemo::insert(const std::vector<int64_t> &key, const Region &region) {
    // Key, region and the hash node's own overhead (about four words).
    const size_t bytes = key.size() * sizeof(int64_t) + region.size() * sizeof(Span) + 64;
    insert_bounded(regions_, key, region, bytes, bytes_, max_bytes_, resets);
}

std::shared_ptr<const RegionMemo::Demand> RegionMemo::find_demand(const std::vector<int64_t> &key) {
    const auto *known = find_counted(demands_, key, demand_hits, demand_misses);
    return known ? *known : nullptr;
}

void RegionMemo::insert_demand(const std::vector<int64_t> &key, std::shared_ptr<const Demand> demand) {
    // Key, each producer's region in a map node, and the hash node.
    size_t bytes = key.size() * sizeof(int64_t) + 64;
    for (const auto &[producer, region] : *demand)
        bytes += region.size() * sizeof(Span) + 64;
    insert_bounded(demands_, key, std::move(demand), bytes, demand_bytes_, max_bytes_, resets);
}

std::shared_ptr<const EffectiveAccesses> RegionMemo::find_accesses(const std::vector<int64_t> &key) {
    const auto *known = find_counted(accesses_, key, access_hits, access_misses);
    return known ? *known : nullptr;
}

void RegionMemo::insert_accesses(const std::vector<int64_t> &key,
                                 std::shared_ptr<const EffectiveAccesses> accesses) {
    // Key, each access with its jacobian's rows, and the hash node.
    size_t bytes = key.size() * sizeof(int64_t) + 64;
    for (const EffectiveAccess &a : *accesses) {
        bytes += sizeof(EffectiveAccess);
        for (const auto &row : a.jacobian)
            bytes += row.size() * sizeof(row[0]) + sizeof(row);
    }
    insert_bounded(accesses_, key, std::move(accesses), bytes, access_bytes_, max_bytes_, resets);
}

} // namespace gpusched
