#pragma once
// The algorithm of the gs_blur test generator, shared by the generator and
// by the variant the e2e test compiles with the plugin's emitted schedule:
// a separable 3x3 blur through a boundary condition, a scalar parameter and
// a per-row reduction.
#include <Halide.h>

namespace gs_blur {

// InputBuffer: the generator's Input<Buffer<float>> (its shape bounds the
// boundary condition).
template <typename InputBuffer>
void define(const InputBuffer &input, const Halide::Expr &gain, Halide::Func output) {
    using Halide::Func;
    using Halide::RDom;
    using Halide::Var;
    Var x("x"), y("y");
    Func clamped = Halide::BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), row_max("row_max");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) * (1.0f / 3.0f);
    RDom r(0, 16, "r");
    row_max(y) = 0.0f;
    row_max(y) = Halide::max(row_max(y), clamped(r, y));
    output(x, y) = gain * (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) + row_max(y);
}

} // namespace gs_blur
