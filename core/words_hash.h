#pragma once
// The hash of a memo key made of 64-bit words (the search's memos key on
// plain vectors of int64: decisions, loop bounds, addresses). FNV-1a over
// the words, two operations a word (keys run to dozens of words and are
// hashed for every lookup), with splitmix64's final avalanche so that the
// low bits a hash table uses are well spread. A memo compares keys whole,
// so a collision costs a comparison, never a wrong entry.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpusched {

inline uint64_t hash_words(const std::vector<int64_t> &words) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : words)
        h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

struct WordsHash {
    size_t operator()(const std::vector<int64_t> &words) const {
        return static_cast<size_t>(hash_words(words));
    }
};

} // namespace gpusched
