#pragma once
// The algorithm of the rotated_stack test pipeline (issue 59), shared by the
// search tests and the driver's test generator: a stack of frames summed and
// turned a quarter (rot(x, y) sums in(y, x, r) over the frames: an update,
// so it is stored, never inlined), then turned back and blurred along the
// turned axis (out(x, y) reads rot(y, x - 1 .. x + 1)). Stored in its
// definition's layout, rot is written along one dimension and read along the
// other, and one of the two is a sector per lane; stored with y innermost
// and computed with its threads along y, every read and write is coalesced.
#include <Halide.h>

namespace rotated_stack {

// in: the stack (x, y, frame), read through a boundary condition (rot's
// region is one column wider on each side than out's).
inline void define(const Halide::Func &in, Halide::Func rot, Halide::Func out, int frames) {
    using Halide::Var;
    Var x("x"), y("y");
    Halide::RDom r(0, frames, "r");
    rot(x, y) = 0.0f;
    rot(x, y) += in(y, x, r);
    out(x, y) = rot(y, x - 1) + 2.0f * rot(y, x) + rot(y, x + 1);
}

} // namespace rotated_stack
