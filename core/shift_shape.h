#pragma once
// How a region below root moves as its kernel's tile moves, known without
// moving it.
//
// A Func sized by its largest extent over the tile's starts (sized_by_max in
// core/loop_nest.h) had its region walked at each of kResidues - 1 shifts of
// the tile: a quarter of a pyramid's search and an eighth of a small deep
// pipeline's (issue 30). Yet each bound of the region is a function of the
// shift s built from the consumers' footprints (integer arithmetic on the
// loops' bounds), unions (min of lower bounds, max of upper bounds) and
// sizing by a constant extent, and two kinds of such functions say where
// their extent is largest without walking every shift:
// - periodic: b(s + P) = b(s) + T. Lines are (P = 1, T the slope), sums of
//   periodic functions are, and so is a floor division of one (the period
//   grows by what the divisor leaves over: x / 2 of a line of slope 1 has
//   P = 2, T = 1). Where both bounds of a dimension have the same T over a
//   common period its extent repeats every P shifts: shifts 1..P give its
//   largest extent (one, where P = 1: the extent is constant).
// - bent one way: a lower bound concave in s and an upper bound convex, as a
//   union of lines of different slopes makes them (a Func read at x and at
//   2x in one kernel); then the extent is convex and largest at the first or
//   the last shift.
// Anything else (a clamp of a periodic bound, a bend composed the wrong way,
// a union of periodic bounds that move apart) is unknown and keeps every
// walk. A region's walks are the union of its dimensions'.

#include <cstdint>
#include <vector>

#include "core/function_dag.h"

namespace gpusched {

// One bound of a region as a function of the tile's shift s.
struct BoundShape {
    enum class Curve : uint8_t {
        Periodic, // b(s + period) = b(s) + step; a line where period is 1
        Bent,     // a lower bound concave in s, an upper bound convex
        Unknown,  // neither is known
    };
    Curve curve = Curve::Periodic;
    int64_t period = 1, step = 0;
    static BoundShape line(int64_t slope) { return {Curve::Periodic, 1, slope}; }
    static BoundShape periodic(int64_t period, int64_t step) { return {Curve::Periodic, period, step}; }
    static BoundShape bent() { return {Curve::Bent, 1, 0}; }
    static BoundShape unknown() { return {Curve::Unknown, 1, 0}; }
    bool is_line() const { return curve == Curve::Periodic && period == 1; }
};

struct SpanShape {
    BoundShape min, max;
};
using RegionShape = std::vector<SpanShape>; // per dimension; empty: no region

// The union's bound of two bounds of one side (min of lower bounds, max of
// upper bounds): periodic bounds that move alike stay periodic, lines of
// different slopes (or a line and a bend) bend, anything else is unknown.
BoundShape join(const BoundShape &a, const BoundShape &b);
// The union of two regions' shapes, as merge_region unites the regions.
void merge_shape(RegionShape &into, const RegionShape &from);

// The shapes of a stage's loops over its Func's region (pure loops span it,
// RVars are fixed), as FunctionDAG::loop_bounds makes the loops.
void loop_shapes_into(const Stage &s, const RegionShape &region, std::vector<SpanShape> &out);
// The loops of the tile that moves: every pure loop shifted by s, RVars fixed.
void moving_loop_shapes(const Stage &s, std::vector<SpanShape> &out);

// The shape of the box that FunctionDAG::required makes of edge e over loops
// of these shapes.
RegionShape required_shape(const Edge &e, const std::vector<SpanShape> &loops);

// A region whose upper bounds are raised to its lower bounds plus a constant
// extent (a consumer sized by its largest extent, as the nest sizes it).
void size_by_constant_extent(RegionShape &r);

// The shifts 1..kResidues - 1 at which a region of this shape must be walked
// for its largest extent in every dimension: 1..until, and the last too
// where `last`; every one where `every`.
struct ShiftWalks {
    bool every = true;
    int64_t until = 0;
    bool last = false;
};
ShiftWalks shift_walks(const RegionShape &r, int64_t residues);

} // namespace gpusched
