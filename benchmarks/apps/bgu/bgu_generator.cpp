// Bilateral guided upsampling (BGU, Chen et al. 2016): transfers an image
// operator that was run at low resolution to the full-resolution image, by
// fitting local affine colour transforms in a bilateral grid.
//
// Given a low-resolution input/output pair (low_in -> low_out) and the
// full-resolution input (full_in):
//  1. Splat: every low-res pixel, at grid position (x / cell_size,
//     y / cell_size, luma * (z_bins - 1)), adds the least-squares sufficient
//     statistics of an affine fit out = M * (r, g, b, 1) to its spatial cell
//     and, with tent weights, the two nearest luma bins: the 10 distinct
//     entries of u u^T and the 12 of u v^T (u = (r, g, b, 1), v = output).
//  2. Blur the grid with [1 2 1] / 4 along z, x and y.
//  3. Per grid cell, solve (A + lambda I) X = B + lambda [I; 0] for the 4x3
//     matrix X by Cholesky factorisation and forward/back substitution,
//     each matrix entry its own stage. The small ridge term pulls cells with
//     little data towards the identity transform.
//  4. Slice: trilinearly interpolate the 12 coefficients at each full-res
//     pixel's grid position (its luma picks z) and apply them to its colour.
// If low_out is an exact affine function of low_in, every cell recovers that
// function, so the output applies it to full_in.
//
// Stages: 3 input clamps, low-res luma, low-res z, per-pixel statistics,
// grid (pure + 1 update), blur z/x/y, 10 + 12 regularised matrix entries,
// 10 Cholesky entries, 12 forward + 12 back substitution entries, packed
// coefficients, full-res luma, slice, output = 70 Funcs. Sizes: 1536x2560
// RGB at full resolution, 192x320 at low resolution (1/8), 8x8-pixel cells,
// 8 luma bins. See docs/apps/bgu.md.
//
// GeneratorParam `schedule`: "none" (unscheduled, for autoschedulers),
// "naive" (every non-inlined Func its own 16x16-tiled kernel: the floor) or
// "manual" (the expert GPU schedule below). naive/manual need a GPU target.

#include "Halide.h"

#include <string>
#include <vector>

#include "../common/schedule_helpers.h"

namespace {

using namespace Halide;

// Ridge regularisation of the per-cell least-squares fit. Small next to a
// cell's accumulated weight (tens of pixels), large enough to keep empty
// cells well conditioned.
constexpr float kLambda = 1e-3f;
constexpr int kStats = 22; // 10 entries of the symmetric 4x4 A, 12 of the 4x3 B

Expr luma(Func img, Expr x, Expr y) {
    return 0.299f * img(x, y, 0) + 0.587f * img(x, y, 1) + 0.114f * img(x, y, 2);
}

// Index of A(i, j), i <= j, among the 10 distinct entries of a symmetric 4x4.
int a_index(int i, int j) {
    if (i > j) {
        std::swap(i, j);
    }
    static const int kRowStart[4] = {0, 4, 7, 9};
    return kRowStart[i] + (j - i);
}

class Bgu : public Generator<Bgu> {
public:
    GeneratorParam<std::string> schedule{"schedule", "none"};
    // Low-res pixels per grid cell side, and number of luma bins.
    GeneratorParam<int> cell_size{"cell_size", 8};
    GeneratorParam<int> z_bins{"z_bins", 8};

    Input<Buffer<float, 3>> low_in{"low_in"};   // (x, y, c) RGB
    Input<Buffer<float, 3>> low_out{"low_out"}; // (x, y, c) RGB, the operator's output
    Input<Buffer<float, 3>> full_in{"full_in"}; // (x, y, c) RGB
    Output<Buffer<float, 3>> output{"output"};  // (x, y, c) RGB

    void generate() {
        const int s = cell_size;
        const int nz = z_bins;
        _halide_user_assert(s >= 1 && nz >= 2) << "bgu: need cell_size >= 1 and z_bins >= 2\n";

        low_in_c = BoundaryConditions::repeat_edge(low_in);
        low_out_c = BoundaryConditions::repeat_edge(low_out);
        full_in_c = BoundaryConditions::repeat_edge(full_in);

        // 1. Splat.
        low_luma(x, y) = luma(low_in_c, x, y);
        low_z(x, y) = clamp(low_luma(x, y), 0.0f, 1.0f) * (nz - 1);
        {
            Expr u[4] = {low_in_c(x, y, 0), low_in_c(x, y, 1), low_in_c(x, y, 2), 1.0f};
            Expr v[3] = {low_out_c(x, y, 0), low_out_c(x, y, 1), low_out_c(x, y, 2)};
            std::vector<Expr> entries(kStats);
            for (int i = 0; i < 4; i++) {
                for (int j = i; j < 4; j++) {
                    entries[a_index(i, j)] = u[i] * u[j];
                }
                for (int k = 0; k < 3; k++) {
                    entries[10 + 3 * i + k] = u[i] * v[k];
                }
            }
            stats(x, y, ch) = mux(ch, entries);
        }
        // Gathered per (cell, bin): every pixel of the cell contributes with
        // its tent weight in z, so no scatter (and no atomics) is needed.
        rcell = RDom(0, s, 0, s, "rcell");
        Expr px = x * s + rcell.x, py = y * s + rcell.y;
        grid(x, y, z, ch) = 0.0f;
        grid(x, y, z, ch) += max(0.0f, 1.0f - abs(low_z(px, py) - z)) * stats(px, py, ch);

        // 2. Blur.
        blur_z(x, y, z, ch) =
            (grid(x, y, z - 1, ch) + 2.0f * grid(x, y, z, ch) + grid(x, y, z + 1, ch)) * 0.25f;
        blur_x(x, y, z, ch) =
            (blur_z(x - 1, y, z, ch) + 2.0f * blur_z(x, y, z, ch) + blur_z(x + 1, y, z, ch)) * 0.25f;
        blur_y(x, y, z, ch) =
            (blur_x(x, y - 1, z, ch) + 2.0f * blur_x(x, y, z, ch) + blur_x(x, y + 1, z, ch)) * 0.25f;

        // 3. Per-cell regularised least squares, one stage per matrix entry.
        Func a[4][4], b[4][3], l[4][4], fy[4][3], fx[4][3];
        for (int i = 0; i < 4; i++) {
            for (int j = i; j < 4; j++) {
                a[i][j] = Func("A_" + std::to_string(i) + std::to_string(j));
                a[i][j](x, y, z) = blur_y(x, y, z, a_index(i, j)) + (i == j ? kLambda : 0.0f);
                a[j][i] = a[i][j];
            }
            for (int k = 0; k < 3; k++) {
                b[i][k] = Func("B_" + std::to_string(i) + std::to_string(k));
                b[i][k](x, y, z) = blur_y(x, y, z, 10 + 3 * i + k) + (i == k ? kLambda : 0.0f);
            }
        }
        // Cholesky, A = L L^T, column by column. The clamp guards the square
        // root against rounding; the ridge term keeps the true value > 0.
        for (int j = 0; j < 4; j++) {
            Expr d = a[j][j](x, y, z);
            for (int m = 0; m < j; m++) {
                d -= l[j][m](x, y, z) * l[j][m](x, y, z);
            }
            l[j][j] = Func("L_" + std::to_string(j) + std::to_string(j));
            l[j][j](x, y, z) = sqrt(max(d, 1e-12f));
            for (int i = j + 1; i < 4; i++) {
                Expr e = a[i][j](x, y, z);
                for (int m = 0; m < j; m++) {
                    e -= l[i][m](x, y, z) * l[j][m](x, y, z);
                }
                l[i][j] = Func("L_" + std::to_string(i) + std::to_string(j));
                l[i][j](x, y, z) = e / l[j][j](x, y, z);
            }
        }
        // Forward substitution L Y = B, then back substitution L^T X = Y.
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < 4; i++) {
                Expr e = b[i][k](x, y, z);
                for (int m = 0; m < i; m++) {
                    e -= l[i][m](x, y, z) * fy[m][k](x, y, z);
                }
                fy[i][k] = Func("Y_" + std::to_string(i) + std::to_string(k));
                fy[i][k](x, y, z) = e / l[i][i](x, y, z);
            }
            for (int i = 3; i >= 0; i--) {
                Expr e = fy[i][k](x, y, z);
                for (int m = i + 1; m < 4; m++) {
                    e -= l[m][i](x, y, z) * fx[m][k](x, y, z);
                }
                fx[i][k] = Func("X_" + std::to_string(i) + std::to_string(k));
                fx[i][k](x, y, z) = e / l[i][i](x, y, z);
            }
        }
        std::vector<Expr> coeff_list;
        for (int i = 0; i < 4; i++) {
            for (int k = 0; k < 3; k++) {
                coeff_list.push_back(fx[i][k](x, y, z));
            }
        }
        coeffs(x, y, z, ch) = mux(ch, coeff_list); // ch = 3 * i + k: weight of u_i in output k
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++) {
                if (j <= i) {
                    solve_funcs.push_back(l[i][j]);
                }
                if (j >= i) {
                    solve_inputs.push_back(a[i][j]);
                }
            }
            for (int k = 0; k < 3; k++) {
                solve_inputs.push_back(b[i][k]);
                solve_funcs.push_back(fy[i][k]);
                solve_funcs.push_back(fx[i][k]);
            }
        }

        // 4. Slice and apply.
        full_luma(x, y) = luma(full_in_c, x, y);
        Expr scale_x = cast<float>(low_in.dim(0).extent()) / cast<float>(full_in.dim(0).extent());
        Expr scale_y = cast<float>(low_in.dim(1).extent()) / cast<float>(full_in.dim(1).extent());
        // Cell j's centre is at low-res pixel (j + 0.5) * s - 0.5.
        Expr gxf = (x + 0.5f) * scale_x / s - 0.5f;
        Expr gyf = (y + 0.5f) * scale_y / s - 0.5f;
        Expr gzf = clamp(full_luma(x, y), 0.0f, 1.0f) * (nz - 1);
        Expr gxi = cast<int>(floor(gxf)), gyi = cast<int>(floor(gyf)), gzi = cast<int>(floor(gzf));
        Expr fxw = gxf - gxi, fyw = gyf - gyi, fzw = gzf - gzi;
        auto lerp_f = [](Expr lo, Expr hi, Expr w) { return lo + (hi - lo) * w; };
        auto at = [&](Expr dx, Expr dy, Expr dz) { return coeffs(gxi + dx, gyi + dy, gzi + dz, ch); };
        sliced(x, y, ch) = lerp_f(
            lerp_f(lerp_f(at(0, 0, 0), at(1, 0, 0), fxw), lerp_f(at(0, 1, 0), at(1, 1, 0), fxw), fyw),
            lerp_f(lerp_f(at(0, 0, 1), at(1, 0, 1), fxw), lerp_f(at(0, 1, 1), at(1, 1, 1), fxw), fyw), fzw);

        output(x, y, c) = sliced(x, y, c) * full_in_c(x, y, 0) + sliced(x, y, 3 + c) * full_in_c(x, y, 1) +
                          sliced(x, y, 6 + c) * full_in_c(x, y, 2) + sliced(x, y, 9 + c);

        // Paper suite size: 1536x2560 full resolution; low resolution 1/8.
        low_in.set_estimates({{0, 192}, {0, 320}, {0, 3}});
        low_out.set_estimates({{0, 192}, {0, 320}, {0, 3}});
        full_in.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});

        apply_schedule();
    }

private:
    Var x{"x"}, y{"y"}, z{"z"}, c{"c"}, ch{"ch"};
    RDom rcell;
    Func low_in_c{"low_in_c"}, low_out_c{"low_out_c"}, full_in_c{"full_in_c"};
    Func low_luma{"low_luma"}, low_z{"low_z"}, stats{"stats"}, grid{"grid"};
    Func blur_z{"blur_z"}, blur_x{"blur_x"}, blur_y{"blur_y"};
    Func coeffs{"coeffs"}, full_luma{"full_luma"}, sliced{"sliced"};
    std::vector<Func> solve_inputs; // regularised A and B entries
    std::vector<Func> solve_funcs;  // L, Y, X entries

    // Applies the GeneratorParam `schedule` (a member named schedule() would
    // collide with the param, so generate() calls this).
    void apply_schedule() {
        using gpusched_apps::ScheduleKind;
        const ScheduleKind kind =
            gpusched_apps::parse_schedule("bgu", schedule, get_target(), GPUSCHED_GENERATOR_AUTOSCHEDULED(),
                                          gpusched_apps::ScheduleMenu::GpuOnly);
        if (kind == ScheduleKind::Naive) schedule_naive();
        if (kind == ScheduleKind::Manual) schedule_manual();
    }

    // Its own kernel, 16x16 threads over the first two dimensions, the rest
    // serial inside each thread.
    static void naive_root(Func f) {
        std::vector<Var> args = f.args();
        Var xo, yo, xi, yi;
        auto tile = [&](Stage st) {
            std::vector<VarOrRVar> order(args.begin() + 2, args.end());
            order.push_back(args[0]);
            order.push_back(args[1]);
            if (args.size() > 2) {
                st.reorder(order);
            }
            st.gpu_tile(args[0], args[1], xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
        };
        f.compute_root();
        tile(f);
        for (int u = 0; u < f.num_update_definitions(); u++) {
            tile(f.update(u));
        }
    }

    // Floor: every Func its own kernel except the boundary clamps and the
    // pointwise low-res z (inlined); this is the "every step of the 4x4
    // solve its own kernel" schedule the paper criticises.
    void schedule_naive() {
        for (Func f :
             {low_luma, stats, grid, blur_z, blur_x, blur_y, coeffs, full_luma, sliced, Func(output)}) {
            naive_root(f);
        }
        for (Func f : solve_inputs) {
            naive_root(f);
        }
        for (Func f : solve_funcs) {
            naive_root(f);
        }
    }

    // Four kernels.
    // 1. Grid: one block per spatial cell, one thread per (bin, statistic)
    //    (8 x 22 = 176 threads), each summing the cell's pixels. The cell's
    //    per-pixel statistics and z (8 x 8 x 22 floats = 5.6 KB) are staged
    //    in shared memory first, so each low-res pixel is read once.
    // 2. Blur: the y pass is the kernel (8x8 cells x 4 bins per block, the
    //    statistics loop serial), the x pass is staged in shared memory per
    //    block (8 x 10 x 4 x 22 floats = 28 KB), the z pass inlined into it.
    // 3. Solve: one thread per cell (8x4x8 per block); every matrix entry,
    //    Cholesky factor and substitution value is computed at the thread
    //    into registers, and the 12 coefficients are written unrolled. This
    //    is the fusion the paper notes a previous autoscheduler missed.
    // 4. Slice and apply: 32x8 full-res pixels per block, 3 channels
    //    unrolled per thread; all pixels of a block touch the same few cells,
    //    so the 8-corner coefficient reads hit in cache.
    void schedule_manual() {
        Var xo{"xo"}, yo{"yo"}, zo{"zo"}, xi{"xi"}, yi{"yi"}, zi{"zi"};

        grid.compute_root().reorder(z, ch, x, y).gpu_blocks(x, y).gpu_threads(z, ch);
        grid.update().reorder(rcell.x, rcell.y, z, ch, x, y).gpu_blocks(x, y).gpu_threads(z, ch);
        grid.bound(ch, 0, kStats);
        stats.compute_at(grid, x)
            .store_in(MemoryType::GPUShared)
            .bound(ch, 0, kStats)
            .reorder(ch, x, y)
            .gpu_threads(x, y);
        low_z.compute_at(grid, x).store_in(MemoryType::GPUShared).gpu_threads(x, y);

        blur_y.compute_root().reorder(ch, x, y, z).gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 8, 8, 4);
        blur_x.compute_at(blur_y, xo)
            .store_in(MemoryType::GPUShared)
            .reorder(ch, x, y, z)
            .gpu_threads(x, y, z);

        coeffs.compute_root()
            .bound(ch, 0, 12)
            .reorder(ch, x, y, z)
            .gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 8, 4, 8)
            .unroll(ch);
        for (Func f : solve_funcs) {
            f.compute_at(coeffs, xi);
        }

        output.compute_root().bound(c, 0, 3).reorder(c, x, y).gpu_tile(x, y, xo, yo, xi, yi, 32, 8).unroll(c);
    }
};

} // namespace

HALIDE_REGISTER_GENERATOR(Bgu, bgu)
