// A Laplacian-style pyramid for the search-time benchmark: `levels` 2x
// downsamplings with a [1 2 1] x [1 2 1] kernel, then back up level by level,
// each level adding the bilinear upsampling of the coarser one. The
// upsamplings read through rounding divisions ((x + 1) / 2), so a Func fused
// into a kernel below root is sized by its largest extent over the tile's
// starts (core/loop_nest.h, sized_by_max): the case whose cost once made the
// search 17x slower (issue 30). 2 * levels + 2 Funcs; 2560x1536 estimates.
#include "Halide.h"

#include <string>
#include <vector>

namespace {

using namespace Halide;

class Pyramid : public Generator<Pyramid> {
public:
    GeneratorParam<int> levels{"levels", 5, 1, 10};
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Var x("x"), y("y");
        std::vector<Func> down(levels + 1), up(levels + 1);
        down[0] = Func("down_0");
        down[0](x, y) = BoundaryConditions::repeat_edge(input)(x, y);
        for (int k = 1; k <= levels; k++) {
            down[k] = Func("down_" + std::to_string(k));
            const Func &p = down[k - 1];
            auto row = [&](Expr yy) { return p(2 * x - 1, yy) + 2.0f * p(2 * x, yy) + p(2 * x + 1, yy); };
            down[k](x, y) = (row(2 * y - 1) + 2.0f * row(2 * y) + row(2 * y + 1)) * (1.0f / 16);
        }
        up[levels] = Func("up_" + std::to_string(levels));
        up[levels](x, y) = down[levels](x, y);
        for (int k = levels - 1; k >= 0; k--) {
            up[k] = Func("up_" + std::to_string(k));
            const Func &c = up[k + 1];
            Expr coarse = (c(x / 2, y / 2) + c((x + 1) / 2, y / 2) + c(x / 2, (y + 1) / 2) +
                           c((x + 1) / 2, (y + 1) / 2)) *
                          0.25f;
            up[k](x, y) = down[k](x, y) * 0.5f + coarse;
        }
        output(x, y) = up[0](x, y);

        input.dim(0).set_estimate(0, 2560);
        input.dim(1).set_estimate(0, 1536);
        output.set_estimate(x, 0, 2560).set_estimate(y, 0, 1536);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Pyramid, pyramid)
