#include "costmodel/row_cost_cache.h"

#include <cstring>
#include <tuple>

namespace gpusched {

namespace {

// The high and low halves of a 64 x 64 -> 128-bit product, folded (the
// mixing step of wyhash). Targets without a 128-bit integer get the same
// product from 32-bit halves, so a key is the same on every target.
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 uint128; // GCC and Clang on 64-bit targets

uint64_t fold_mul(uint64_t x, uint64_t y) {
    const uint128 p = static_cast<uint128>(x) * y;
    return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
}
#else
uint64_t fold_mul(uint64_t x, uint64_t y) {
    const uint64_t mask = 0xffffffffull;
    const uint64_t ll = (x & mask) * (y & mask), hl = (x >> 32) * (y & mask), lh = (x & mask) * (y >> 32),
                   hh = (x >> 32) * (y >> 32);
    const uint64_t cross = (ll >> 32) + (hl & mask) + lh;
    const uint64_t hi = hh + (hl >> 32) + (cross >> 32), lo = (cross << 32) | (ll & mask);
    return lo ^ hi;
}
#endif

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

RowCostCache::Prefix RowCostCache::prefix(int stage_id, const ScheduleFeatures &row) {
    // Two independent hashes of the same words make the 128-bit key, each
    // folding two words into its state with one wide multiply (four
    // multiplies per word were 12% of a small deep pipeline's search).
    constexpr std::size_t n = std::tuple_size<decltype(row.values)>::value;
    constexpr std::size_t ws = static_cast<std::size_t>(ScheduleFeature::working_set_at_root);
    static_assert(ws < n, "working_set_at_root is a feature of the row");
    uint64_t words[n - 1]; // every feature but working_set_at_root, in order
    std::memcpy(words, row.values.data(), ws * sizeof(uint64_t));
    std::memcpy(words + ws, row.values.data() + ws + 1, (n - 1 - ws) * sizeof(uint64_t));
    const uint64_t id = static_cast<uint64_t>(stage_id);
    uint64_t a = 0x9e3779b185ebca87ull ^ id, b = 0xc2b2ae3d27d4eb4full ^ (id * 0x165667b19e3779f9ull);
    std::size_t i = 0;
    for (; i + 2 <= n - 1; i += 2) {
        a = fold_mul(words[i] ^ 0xa0761d6478bd642full, words[i + 1] ^ a);
        b = fold_mul(words[i] ^ 0xe7037ed1a0b428dbull, words[i + 1] ^ b);
    }
    if (i < n - 1) {
        a = fold_mul(words[i] ^ 0x8ebc6af09c88c6e3ull, a ^ 0x589965cc75374cc3ull);
        b = fold_mul(words[i] ^ 0x1d8e4e27c47d124full, b ^ 0x27d4eb2f165667c5ull);
    }
    return Prefix{a, b};
}

RowCostCache::Key RowCostCache::key(const Prefix &prefix, const ScheduleFeatures &row) {
    constexpr std::size_t n = std::tuple_size<decltype(row.values)>::value;
    uint64_t ws;
    std::memcpy(&ws, &row.values[static_cast<std::size_t>(ScheduleFeature::working_set_at_root)], sizeof ws);
    const uint64_t a = fold_mul(ws ^ 0x2d358dccaa6c78a5ull, prefix.a ^ 0x8bb84b93962eacc9ull),
                   b = fold_mul(ws ^ 0x4b33a62ed433d4a3ull, prefix.b ^ 0x4d5a2da51de1aa47ull);
    return Key{finish(a ^ n), finish(b)};
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
