// A small test generator for the plugin (algorithm: gs_blur_algorithm.h).
// Built with -DGS_SCHEDULE_HEADER='"NAME.schedule.h"' it applies a schedule
// the plugin emitted instead of being autoscheduled (the e2e test checks the
// two give the same code).
#include <Halide.h>

#include "gs_blur_algorithm.h"
#ifdef GS_SCHEDULE_HEADER
#include GS_SCHEDULE_HEADER
#endif

namespace {

class GsBlur : public Halide::Generator<GsBlur> {
public:
    Input<Buffer<float>> input{"input", 2};
    Input<float> gain{"gain"};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        gs_blur::define(input, gain, output);
        input.set_estimates({{0, 512}, {0, 256}});
        gain.set_estimate(1.0f);
        output.set_estimates({{0, 512}, {0, 256}});
    }

    void schedule() {
#ifdef GS_SCHEDULE_HEADER
        apply_schedule_gs_blur(get_pipeline(), get_target());
#endif
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(GsBlur, gs_blur)
