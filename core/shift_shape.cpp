#include "core/shift_shape.h"

#include <algorithm>
#include <numeric>

namespace gpusched {

namespace {

using Curve = BoundShape::Curve;
using IntegerNode = CompiledExpr::IntegerNode;

// Periods past this are as good as unknown (the walks are kResidues).
constexpr int64_t kMaxPeriod = 1 << 10;

// The least common period of two, or 0 past kMaxPeriod.
int64_t common_period(int64_t a, int64_t b) {
    const int64_t p = std::lcm(a, b);
    return p > kMaxPeriod ? 0 : p;
}

// A periodic bound's step over a multiple `period` of its own period.
int64_t step_over(const BoundShape &b, int64_t period) {
    return b.step * (period / b.period);
}

// Per slot (loop i's min is slot 2i, its max 2i+1), the integer coefficient
// of a linear bound; false where the bound is not linear.
bool slot_coefficients(const CompiledExpr &e, size_t num_slots, std::vector<int64_t> &coef) {
    const auto *terms = e.linear_terms();
    if (!terms) return false;
    coef.assign(num_slots, 0);
    for (const auto &[slot, k] : *terms) {
        if (slot < 0 || static_cast<size_t>(slot) >= num_slots) return false;
        coef[static_cast<size_t>(slot)] += static_cast<int64_t>(k);
    }
    return true;
}

const BoundShape &slot_shape(const std::vector<SpanShape> &loops, int64_t slot) {
    static const BoundShape unknown = BoundShape::unknown();
    const size_t l = static_cast<size_t>(slot / 2);
    if (slot < 0 || l >= loops.size()) return unknown;
    return slot % 2 == 1 ? loops[l].max : loops[l].min;
}

// The shape of a linear bound over loops of these shapes. Periodic inputs
// give a periodic bound (steps add up by the coefficients over a common
// period). A bent input keeps the bound bent the right way only with the
// sign an interval's bound gives it (a lower bound grows with a loop's
// concave min and falls with its convex max, an upper bound the other way
// round), and only among lines.
BoundShape through(const std::vector<int64_t> &coef, const std::vector<SpanShape> &loops, bool upper) {
    int64_t period = 1;
    bool bent = false, periodic_not_line = false;
    for (size_t slot = 0; slot < coef.size(); slot++) {
        if (coef[slot] == 0) continue;
        const bool of_max = slot % 2 == 1;
        const BoundShape &in = slot_shape(loops, static_cast<int64_t>(slot));
        if (in.curve == Curve::Unknown) return BoundShape::unknown();
        if (in.curve == Curve::Bent) {
            // A min input is concave, a max input convex; the bound must
            // come out concave (lower) or convex (upper).
            if ((of_max == upper) ? coef[slot] < 0 : coef[slot] > 0) return BoundShape::unknown();
            bent = true;
            continue;
        }
        periodic_not_line = periodic_not_line || in.period > 1;
        period = common_period(period, in.period);
        if (period == 0) return BoundShape::unknown();
    }
    if (bent) return periodic_not_line ? BoundShape::unknown() : BoundShape::bent();
    int64_t step = 0;
    for (size_t slot = 0; slot < coef.size(); slot++)
        if (coef[slot] != 0)
            step += coef[slot] * step_over(slot_shape(loops, static_cast<int64_t>(slot)), period);
    return BoundShape::periodic(period, step);
}

// The shape of a bound given as integer arithmetic (rounding divisions,
// clamps): periodic where every part is, else unknown.
BoundShape through_integer(const std::vector<IntegerNode> &nodes, const std::vector<SpanShape> &loops) {
    using Kind = IntegerNode::Kind;
    if (nodes.empty()) return BoundShape::unknown();
    std::vector<BoundShape> v(nodes.size());
    for (size_t i = 0; i < nodes.size(); i++) {
        const IntegerNode &n = nodes[i];
        BoundShape &out = v[i];
        switch (n.kind) {
        case Kind::Const:
            out = BoundShape::line(0);
            continue;
        case Kind::Slot:
            out = slot_shape(loops, n.value);
            if (out.curve != Curve::Periodic) out = BoundShape::unknown();
            continue;
        default:
            break;
        }
        const BoundShape &a = v[static_cast<size_t>(n.a)];
        if (a.curve != Curve::Periodic) {
            out = BoundShape::unknown();
            continue;
        }
        if (n.kind == Kind::Scale) {
            out = BoundShape::periodic(a.period, a.step * n.value);
            continue;
        }
        if (n.kind == Kind::Div) {
            // floor((b(s) + step) / d) = floor(b(s) / d) + step / d where d
            // divides the step: over m periods, m the part of d the step
            // leaves over.
            const int64_t m = n.value / std::gcd(a.step, n.value);
            const int64_t period = a.period * m;
            out = period > kMaxPeriod ? BoundShape::unknown()
                                      : BoundShape::periodic(period, a.step * m / n.value);
            continue;
        }
        const BoundShape &b = v[static_cast<size_t>(n.b)];
        const int64_t period = b.curve == Curve::Periodic ? common_period(a.period, b.period) : 0;
        if (period == 0) {
            out = BoundShape::unknown();
            continue;
        }
        const int64_t sa = step_over(a, period), sb = step_over(b, period);
        if (n.kind == Kind::Add)
            out = BoundShape::periodic(period, sa + sb);
        else if (n.kind == Kind::Sub)
            out = BoundShape::periodic(period, sa - sb);
        else // Min, Max: periodic only where both move alike
            out = sa == sb ? BoundShape::periodic(period, sa) : BoundShape::unknown();
    }
    return v.back();
}

// Whether hi - lo >= 0 for every loop bounds with min <= max: the same
// coefficient per loop on its min and max taken together, a nonnegative
// one on its width, and a constant no smaller. Then max(lo, hi) is hi.
bool never_below(const std::vector<int64_t> &lo, double lo_constant, const std::vector<int64_t> &hi,
                 double hi_constant) {
    if (hi_constant < lo_constant) return false;
    for (size_t l = 0; l + 1 < lo.size(); l += 2) {
        const int64_t on_min = hi[l] - lo[l], on_max = hi[l + 1] - lo[l + 1];
        if (on_min + on_max != 0 || on_max < 0) return false;
    }
    return true;
}

} // namespace

BoundShape join(const BoundShape &a, const BoundShape &b) {
    if (a.curve == Curve::Unknown || b.curve == Curve::Unknown) return BoundShape::unknown();
    if (a.curve == Curve::Periodic && b.curve == Curve::Periodic) {
        const int64_t period = common_period(a.period, b.period);
        if (period == 0) return BoundShape::unknown();
        const int64_t sa = step_over(a, period), sb = step_over(b, period);
        if (sa == sb) return BoundShape::periodic(period, sa);
        return a.is_line() && b.is_line() ? BoundShape::bent() : BoundShape::unknown();
    }
    // One bent at least: bent with lines and bends only.
    const bool a_ok = a.curve == Curve::Bent || a.is_line(), b_ok = b.curve == Curve::Bent || b.is_line();
    return a_ok && b_ok ? BoundShape::bent() : BoundShape::unknown();
}

void merge_shape(RegionShape &into, const RegionShape &from) {
    if (into.empty()) {
        into = from;
        return;
    }
    for (size_t d = 0; d < into.size() && d < from.size(); d++) {
        into[d].min = join(into[d].min, from[d].min);
        into[d].max = join(into[d].max, from[d].max);
    }
}

void loop_shapes_into(const Stage &s, const RegionShape &region, std::vector<SpanShape> &out) {
    out.resize(s.loops.size());
    for (size_t i = 0; i < s.loops.size(); i++) {
        const LoopDim &l = s.loops[i];
        if (!l.is_rvar && static_cast<size_t>(l.func_arg) < region.size())
            out[i] = region[static_cast<size_t>(l.func_arg)];
        else if (l.is_rvar)
            out[i] = {BoundShape::line(0), BoundShape::line(0)};
        else
            out[i] = {BoundShape::unknown(), BoundShape::unknown()};
    }
}

void moving_loop_shapes(const Stage &s, std::vector<SpanShape> &out) {
    out.resize(s.loops.size());
    for (size_t i = 0; i < s.loops.size(); i++) {
        const int64_t slope = s.loops[i].is_rvar ? 0 : 1;
        out[i] = {BoundShape::line(slope), BoundShape::line(slope)};
    }
}

RegionShape required_shape(const Edge &e, const std::vector<SpanShape> &loops) {
    const size_t num_slots = 2 * loops.size();
    RegionShape r(e.compiled_box.size());
    std::vector<int64_t> lo, hi;
    for (size_t d = 0; d < e.compiled_box.size(); d++) {
        const CompiledExpr &mn = e.compiled_box[d].first, &mx = e.compiled_box[d].second;
        const bool lo_linear = slot_coefficients(mn, num_slots, lo),
                   hi_linear = slot_coefficients(mx, num_slots, hi);
        const BoundShape low = lo_linear                  ? through(lo, loops, false)
                               : d < e.integer_box.size() ? through_integer(e.integer_box[d].first, loops)
                                                          : BoundShape::unknown();
        const BoundShape high = hi_linear                  ? through(hi, loops, true)
                                : d < e.integer_box.size() ? through_integer(e.integer_box[d].second, loops)
                                                           : BoundShape::unknown();
        // required() makes the span {mn, max(mn, mx)}.
        BoundShape top;
        if (lo_linear && hi_linear && never_below(lo, mn.linear_constant(), hi, mx.linear_constant()))
            top = high;
        else if (low.curve == Curve::Periodic)
            top = join(low, high); // the larger of the two, as a union's upper bound
        else
            top = BoundShape::unknown(); // the larger of a concave and a convex curve
        r[d] = {low, top};
    }
    return r;
}

void size_by_constant_extent(RegionShape &r) {
    for (SpanShape &s : r) {
        // max(max, min + E - 1): as a union's upper bound of the two, where
        // the lower bound is not bent (a concave curve in an upper bound).
        s.max = s.min.curve == Curve::Periodic ? join(s.max, s.min) : BoundShape::unknown();
    }
}

ShiftWalks shift_walks(const RegionShape &r, int64_t residues) {
    ShiftWalks w;
    w.every = false;
    w.until = 1;
    for (const SpanShape &s : r) {
        if (s.min.curve == Curve::Unknown || s.max.curve == Curve::Unknown) return ShiftWalks{};
        if (s.min.curve == Curve::Periodic && s.max.curve == Curve::Periodic) {
            const int64_t period = common_period(s.min.period, s.max.period);
            if (period == 0) return ShiftWalks{};
            if (step_over(s.min, period) == step_over(s.max, period)) {
                w.until = std::max(w.until, period); // the extent repeats every period
                continue;
            }
            if (!s.min.is_line() || !s.max.is_line()) return ShiftWalks{};
        } else if (!(s.min.curve == Curve::Bent || s.min.is_line()) ||
                   !(s.max.curve == Curve::Bent || s.max.is_line())) {
            return ShiftWalks{};
        }
        w.last = true; // convex: largest at the first or the last shift
    }
    if (w.until >= residues - 1 || (w.last && w.until >= residues - 2)) return ShiftWalks{};
    return w;
}

} // namespace gpusched
