// A small test generator for the plugin: a separable 3x3 blur through a
// boundary condition, with a scalar parameter and a per-row reduction.
#include <Halide.h>

namespace {

class GsBlur : public Halide::Generator<GsBlur> {
public:
    Input<Buffer<float>> input{"input", 2};
    Input<float> gain{"gain"};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        Func clamped = Halide::BoundaryConditions::repeat_edge(input);
        Func blur_x("blur_x"), row_max("row_max");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) * (1.0f / 3.0f);
        RDom r(0, 16, "r");
        row_max(y) = 0.0f;
        row_max(y) = Halide::max(row_max(y), clamped(r, y));
        output(x, y) = gain * (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) + row_max(y);

        input.set_estimates({{0, 512}, {0, 256}});
        gain.set_estimate(1.0f);
        output.set_estimates({{0, 512}, {0, 256}});
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(GsBlur, gs_blur)
