#include "costmodel/row_cost_cache.h"

#include <cstring>

namespace gpusched {

namespace {

uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

// One round of a multiply-rotate mix (the xxHash64 round constants).
uint64_t mix(uint64_t h, uint64_t v, uint64_t p1, uint64_t p2) {
    h += v * p2;
    h = rotl(h, 31);
    return h * p1;
}

uint64_t finish(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

} // namespace

RowCostCache::RowCostCache(int slots_log2) : slots_(std::size_t(1) << slots_log2), shift_(64 - slots_log2) {}

RowCostCache::Key RowCostCache::key(int stage_id, const ScheduleFeatures &row) {
    // Two independent hashes of the same words make the 128-bit key.
    uint64_t a = 0x9e3779b185ebca87ull ^ static_cast<uint64_t>(stage_id);
    uint64_t b = 0xc2b2ae3d27d4eb4full + static_cast<uint64_t>(stage_id) * 0x165667b19e3779f9ull;
    for (double v : row.values) {
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        a = mix(a, bits, 0x9e3779b185ebca87ull, 0xc2b2ae3d27d4eb4full);
        b = mix(b, bits, 0x27d4eb2f165667c5ull, 0x85ebca77c2b2ae63ull);
    }
    return Key{finish(a), finish(b)};
}

bool RowCostCache::lookup(const Key &k, double &cost) {
    const Slot &s = slots_[index(k)];
    if (s.used && s.key.a == k.a && s.key.b == k.b) {
        cost = s.cost;
        hits_++;
        return true;
    }
    misses_++;
    return false;
}

void RowCostCache::store(const Key &k, double cost) {
    Slot &s = slots_[index(k)];
    s.key = k;
    s.cost = cost;
    s.used = true;
}

void RowCostCache::clear() {
    for (Slot &s : slots_)
        s.used = false;
    hits_ = misses_ = 0;
}

} // namespace gpusched
