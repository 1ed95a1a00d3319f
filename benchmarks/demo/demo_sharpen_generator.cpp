// The bundled demo pipeline: a small multi-stage stencil pipeline on a
// 1536x2560 RGB image, the kind of thing gpusched is for. It blurs with a
// separable 5-tap binomial filter, sharpens by unsharp masking, and applies a
// tone curve: five stages with producer-consumer reuse, so fusion and shared
// memory matter. The README's first example runs One Shot on it.

#include "Halide.h"

// Halide.h undefines its error macros at the end but keeps
// _halide_user_assert, spelled the same from Halide 14 to 21: a user error
// the way Halide reports its own (the generator exits non-zero with
// "Error: <message>").

namespace {

using namespace Halide;

class DemoSharpen : public Generator<DemoSharpen> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"}; // none | naive
    Input<Buffer<float>> input{"input", 3};
    Input<float> amount{"amount"};
    Output<Buffer<float>> output{"output", 3};

    void generate() {
        Var x("x"), y("y"), c("c");
        Func clamped = BoundaryConditions::repeat_edge(input);
        // Binomial 1-4-6-4-1 taps, normalised by 16.
        blur_x(x, y, c) = (clamped(x - 2, y, c) + 4.f * clamped(x - 1, y, c) + 6.f * clamped(x, y, c) +
                           4.f * clamped(x + 1, y, c) + clamped(x + 2, y, c)) /
                          16.f;
        blur_y(x, y, c) = (blur_x(x, y - 2, c) + 4.f * blur_x(x, y - 1, c) + 6.f * blur_x(x, y, c) +
                           4.f * blur_x(x, y + 1, c) + blur_x(x, y + 2, c)) /
                          16.f;
        sharpened(x, y, c) = clamped(x, y, c) + amount * (clamped(x, y, c) - blur_y(x, y, c));
        // A gentle S-shaped tone curve on [0, 1].
        Expr v = clamp(sharpened(x, y, c), 0.f, 1.f);
        output(x, y, c) = v * v * (3.f - 2.f * v);

        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        amount.set_estimate(0.5f);
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        _halide_user_assert(schedule == "none" || schedule == "naive")
            << "demo_sharpen: unknown schedule '" << schedule.value() << "' (none or naive)";
        if (schedule == "naive") apply_naive_schedule();
    }

private:
    Func blur_x{"blur_x"}, blur_y{"blur_y"}, sharpened{"sharpened"};

    // Every Func its own kernel of 16x16 threads: the floor to compare with.
    void apply_naive_schedule() {
        _halide_user_assert(get_target().has_gpu_feature())
            << "demo_sharpen: schedule=naive needs a GPU target";
        Var x = output.args()[0], y = output.args()[1];
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
        for (Func f : {blur_x, blur_y, sharpened}) {
            f.compute_root().gpu_tile(f.args()[0], f.args()[1], xo, yo, xi, yi, 16, 16);
        }
        output.gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(DemoSharpen, demo_sharpen)
