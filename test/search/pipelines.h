#pragma once
// Small Halide pipelines the search tests are run on. Each builds its Funcs
// in the constructor, with estimates on inputs and outputs, and exposes the
// output Functions the way the plugin receives them.

#include <string>
#include <vector>

#include <Halide.h>

#include "test/search/generators/rotated_stack_algorithm.h"

namespace test_pipelines {

using Halide::Func;
using Halide::ImageParam;
using Halide::RDom;
using Halide::Var;

inline std::vector<Halide::Internal::Function> functions(const std::vector<Func> &fs) {
    std::vector<Halide::Internal::Function> r;
    for (const Func &f : fs)
        r.push_back(f.function());
    return r;
}

// out = 3-tap vertical blur of a 3-tap horizontal blur of a float image.
struct Blur {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::Float(32), 2, "blur_in"};
    Func blur_x{"blur_x"}, out{"blur_out"};
    explicit Blur(int w = 256, int h = 128) {
        blur_x(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
        out(x, y) = blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1);
        in.dim(0).set_estimate(-1, w + 2);
        in.dim(1).set_estimate(-1, h + 2);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// A diamond chain: level k reads level k-1 at x-1 and x+1, so with every
// level inlined the output reaches the input along 2^depth paths while the
// chain has only depth + 1 Funcs (bgu's inlined solver has the same shape).
struct DiamondChain {
    Var x{"x"};
    ImageParam in{Halide::Float(32), 1, "dmd_in"}; // read through Halide's wrapper Func "dmd_in_im"
    std::vector<Func> level;
    Func out{"diamond_out"};
    DiamondChain(int depth, int w) {
        level.emplace_back("diamond_0");
        level[0](x) = in(x);
        for (int k = 1; k <= depth; k++) {
            level.emplace_back("diamond_" + std::to_string(k));
            level[k](x) = level[k - 1](x - 1) + level[k - 1](x + 1);
        }
        out(x) = level[depth](x);
        in.dim(0).set_estimate(-depth, w + 2 * depth);
        out.set_estimate(x, 0, w);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// A histogram (RDom with a data-dependent store), a row sum (RDom with a pure
// var), a tuple-valued Func, a pointwise Func and two outputs.
struct Reductions {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::UInt(8), 2, "red_in"};
    RDom r{0, 64, 0, 64, "r"};
    RDom r2{0, 64, "r2"};
    Func hist{"hist"}, row_sum{"row_sum"}, tuple_f{"tuple_f"}, scaled{"scaled"};
    Func out1{"red_out1"}, out2{"red_out2"};
    Reductions() {
        hist(x) = 0;
        hist(Halide::cast<int>(in(r.x, r.y))) += 1;
        row_sum(y) = 0.0f;
        row_sum(y) += Halide::cast<float>(in(r2, y));
        tuple_f(x, y) = Halide::Tuple(Halide::cast<float>(in(x, y)), Halide::cast<int>(in(x, y)) + 1);
        scaled(x, y) = tuple_f(x, y)[0] * 2.0f;
        out1(x, y) = scaled(x, y) + row_sum(y);
        out2(x, y) = tuple_f(x, y)[1] + hist(x * 4);
        in.dim(0).set_estimate(0, 64);
        in.dim(1).set_estimate(0, 64);
        out1.set_estimate(x, 0, 64).set_estimate(y, 0, 64);
        out2.set_estimate(x, 0, 64).set_estimate(y, 0, 64);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out1, out2}); }
};

// A stencil through repeat_edge of an input with estimates.
struct Bounded {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::Float(32), 2, "bnd_in"};
    Func clamped, out{"bnd_out"};
    Bounded() {
        clamped = Halide::BoundaryConditions::repeat_edge(in);
        out(x, y) = clamped(x - 1, y) + clamped(x + 1, y + 1);
        in.dim(0).set_estimate(0, 100);
        in.dim(1).set_estimate(0, 50);
        out.set_estimate(x, 0, 100).set_estimate(y, 0, 50);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

} // namespace test_pipelines

namespace test_pipelines {

// out(x, y) = in(x, y) or in(y, x): one load per point, coalesced or not.
struct Copy {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::Float(32), 2, "copy_in"};
    Func out{"copy_out"};
    explicit Copy(bool transpose, int w = 256, int h = 256) {
        out(x, y) = transpose ? in(y, x) : in(x, y);
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// max_filter's vert in small: out(x, y, t) reads row y + h(t) + 1 - 2^lvl(t)
// of its input, h(t) = floor(sqrt(r^2 - t^2)) and lvl(t) the largest l with
// 2^l <= 2 h(t) + 1, for t in [0, r]. Its index has no value at t = 64 (the
// square root of a negative number) and picks its level with a shift.
struct LevelColumn {
    Var x{"x"}, y{"y"}, t{"t"};
    ImageParam in{Halide::Float(32), 2, "lvl_in"};
    Func out{"lvl_out"};
    explicit LevelColumn(int r = 26, int w = 256, int h = 256) {
        Halide::Expr ht = Halide::clamp(
            Halide::cast<int>(Halide::floor(Halide::sqrt(Halide::cast<float>(r * r - t * t)))), 0, r);
        Halide::Expr lvl = 0;
        for (int l = 1; (1 << l) <= 2 * r + 1; l++)
            lvl += Halide::select(2 * ht + 1 >= (1 << l), 1, 0);
        out(x, y, t) = in(x, y + ht + 1 - (Halide::Expr(1) << lvl) + 2 * r);
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h + 4 * r);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h).set_estimate(t, 0, r + 1);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// out(x, y) = p(x, y) or p(y, x), p a stage worth staging in shared memory.
struct Staged {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::Float(32), 2, "staged_in"};
    Func p{"staged_p"}, out{"staged_out"};
    explicit Staged(bool transpose) {
        p(x, y) = in(x, y) * 2.0f + 1.0f;
        out(x, y) = transpose ? p(y, x) : p(x, y);
        in.dim(0).set_estimate(0, 256);
        in.dim(1).set_estimate(0, 256);
        out.set_estimate(x, 0, 256).set_estimate(y, 0, 256);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

} // namespace test_pipelines

namespace test_pipelines {

// A bilateral grid written the way Halide's apps/bilateral_grid writes it:
// the slice reads the grid at bin cast<int>(clamp(in, 0, 1) * (1.0f /
// r_sigma)) with r_sigma a scalar parameter and no clamp of the bin itself,
// and the grid's z extent may be stated as estimates on the intermediate
// Funcs (grid z in [-2, 14), the blurs z in [0, 12)). r_sigma_estimate <= 0
// leaves the parameter without an estimate.
struct EstimatedGrid {
    Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
    ImageParam in{Halide::Float(32), 2, "eg_in"};
    Halide::Param<float> r_sigma{"eg_r_sigma"};
    RDom r{0, 8, 0, 8, "eg_r"};
    Func grid{"eg_grid"}, gz{"eg_gz"}, gx{"eg_gx"}, gy{"eg_gy"}, slice{"eg_slice"}, out{"eg_out"};
    EstimatedGrid(float r_sigma_estimate, bool func_estimates, int w = 256, int h = 256) {
        using namespace Halide;
        Func edge = BoundaryConditions::repeat_edge(in);
        Expr v = clamp(edge(x * 8 + r.x - 4, y * 8 + r.y - 4), 0.0f, 1.0f);
        grid(x, y, z, c) = 0.0f;
        grid(x, y, cast<int>(v * (1.0f / r_sigma) + 0.5f), c) += select(c == 0, v, 1.0f);
        gz(x, y, z, c) = grid(x, y, z - 2, c) + grid(x, y, z - 1, c) * 4.0f + grid(x, y, z, c) * 6.0f +
                         grid(x, y, z + 1, c) * 4.0f + grid(x, y, z + 2, c);
        gx(x, y, z, c) = gz(x - 2, y, z, c) + gz(x - 1, y, z, c) * 4.0f + gz(x, y, z, c) * 6.0f +
                         gz(x + 1, y, z, c) * 4.0f + gz(x + 2, y, z, c);
        gy(x, y, z, c) = gx(x, y - 2, z, c) + gx(x, y - 1, z, c) * 4.0f + gx(x, y, z, c) * 6.0f +
                         gx(x, y + 1, z, c) * 4.0f + gx(x, y + 2, z, c);
        Expr zv = clamp(in(x, y), 0.0f, 1.0f) * (1.0f / r_sigma);
        Expr zi = cast<int>(zv);
        Expr xf = cast<float>(x % 8) / 8, yf = cast<float>(y % 8) / 8;
        auto plane = [&](Expr zz) {
            return lerp(lerp(gy(x / 8, y / 8, zz, c), gy(x / 8 + 1, y / 8, zz, c), xf),
                        lerp(gy(x / 8, y / 8 + 1, zz, c), gy(x / 8 + 1, y / 8 + 1, zz, c), xf), yf);
        };
        slice(x, y, c) = lerp(plane(zi), plane(zi + 1), zv - zi);
        out(x, y) = slice(x, y, 0) / slice(x, y, 1);
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
        if (r_sigma_estimate > 0) r_sigma.set_estimate(r_sigma_estimate);
        if (func_estimates) {
            grid.set_estimate(z, -2, 16);
            gz.set_estimate(z, 0, 12);
            gx.set_estimate(z, 0, 12);
            gy.set_estimate(z, 0, 12);
        }
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// A lookup table read at an unclamped data-dependent index: Halide bounds
// the read nowhere, so only inlining the table lowers. With an update
// definition the table cannot be inlined.
struct UnclampedLookup {
    Var x{"x"}, y{"y"};
    ImageParam in{Halide::Float(32), 2, "ul_in"};
    Func lut{"ul_lut"}, out{"ul_out"};
    UnclampedLookup(bool lut_estimate, bool lut_update) {
        using namespace Halide;
        lut(x) = cast<float>(x) * 0.5f;
        if (lut_update) lut(x) += 1.0f;
        out(x, y) = lut(cast<int>(in(x, y) * 255.0f)) + in(x, y);
        in.dim(0).set_estimate(0, 128);
        in.dim(1).set_estimate(0, 128);
        if (lut_estimate) lut.set_estimate(x, 0, 256);
        out.set_estimate(x, 0, 128).set_estimate(y, 0, 128);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

// A transposed intermediate (generators/rotated_stack_algorithm.h): the
// case a storage layout decision exists for.
struct RotatedStack {
    ImageParam in{Halide::Float(32), 3, "rot_in"};
    Func rot{"rot"}, out{"rot_out"};
    explicit RotatedStack(int w = 1024, int h = 1024, int frames = 8) {
        rotated_stack::define(Halide::BoundaryConditions::repeat_edge(in), rot, out, frames);
        in.dim(0).set_estimate(0, w); // read turned: the stack's x is out's x
        in.dim(1).set_estimate(0, h);
        in.dim(2).set_estimate(0, frames);
        out.set_estimate(out.args()[0], 0, w).set_estimate(out.args()[1], 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return functions({out}); }
};

} // namespace test_pipelines
