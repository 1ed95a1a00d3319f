#pragma once
// One size per loop of a stage (a StageTiling's serial or thread extents),
// kept inline up to kInline loops and on the heap beyond.
//
// The search copies a Func's decision for every child it makes (hundreds of
// thousands per search on a deep pipeline), and with std::vector each copy
// allocated two lists per stage: the largest single source of the search's
// small allocations (session 29's profile of random_s1 and random_s5). A
// stage's loops are its pure dimensions and RVars, rarely more than six, so
// the lists live inside the decision and copy without allocating.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace gpusched {

class LoopSizes {
public:
    static constexpr size_t kInline = 6;

    LoopSizes() = default;
    LoopSizes(size_t n, int64_t value) { assign(n, value); }
    LoopSizes(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
    // From a list read from a record (implicit: call sites build tilings
    // from std::vector).
    LoopSizes(const std::vector<int64_t> &values) { assign(values.begin(), values.end()); }

    size_t size() const { return size_; }
    int64_t *data() { return size_ <= kInline ? inline_ : heap_.data(); }
    const int64_t *data() const { return size_ <= kInline ? inline_ : heap_.data(); }
    int64_t &operator[](size_t i) { return data()[i]; }
    const int64_t &operator[](size_t i) const { return data()[i]; }
    int64_t *begin() { return data(); }
    int64_t *end() { return data() + size_; }
    const int64_t *begin() const { return data(); }
    const int64_t *end() const { return data() + size_; }

    void assign(size_t n, int64_t value) {
        resize_storage(n);
        std::fill(begin(), end(), value);
    }
    template <typename It> void assign(It first, It last) {
        resize_storage(static_cast<size_t>(std::distance(first, last)));
        std::copy(first, last, begin());
    }
    void push_back(int64_t value) {
        if (size_ < kInline) {
            inline_[size_++] = value;
            return;
        }
        if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);
        heap_.push_back(value);
        size_++;
    }

    std::vector<int64_t> to_vector() const { return {begin(), end()}; }

    bool operator==(const LoopSizes &o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

private:
    // Contents are left unspecified; callers overwrite them.
    void resize_storage(size_t n) {
        if (n <= kInline)
            heap_.clear();
        else
            heap_.resize(n);
        size_ = n;
    }

    int64_t inline_[kInline] = {};
    std::vector<int64_t> heap_; // used only beyond kInline loops
    size_t size_ = 0;
};

} // namespace gpusched
