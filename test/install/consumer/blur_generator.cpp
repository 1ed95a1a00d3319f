// A small two-stage pipeline for the install test and example project: a
// separable 3-tap blur and an unsharp mask on a 512x384 float image. The
// estimates are what gpusched sizes its search with.
#include "Halide.h"

namespace {

using namespace Halide;

class Blur : public Generator<Blur> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func blur_x("blur_x"), blur_y("blur_y");
        blur_x(x, y) = (clamped(x - 1, y) + 2.f * clamped(x, y) + clamped(x + 1, y)) * 0.25f;
        blur_y(x, y) = (blur_x(x, y - 1) + 2.f * blur_x(x, y) + blur_x(x, y + 1)) * 0.25f;
        output(x, y) = clamped(x, y) + 0.5f * (clamped(x, y) - blur_y(x, y));

        input.set_estimates({{0, 512}, {0, 384}});
        output.set_estimates({{0, 512}, {0, 384}});
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Blur, blur)
