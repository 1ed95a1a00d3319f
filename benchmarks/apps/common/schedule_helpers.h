// Schedule helpers shared by the benchmark generators of benchmarks/apps/.
//
// Every generator has a GeneratorParam<std::string> `schedule`:
//   none      leave the pipeline unscheduled (what an autoscheduler receives);
//   cpu_root  (apps whose fully inlined CPU build would never finish: 32 chained stencils, 8
//             pyramid levels, ...) every stage Func compute_root, serial: a cheap CPU build for
//             the tests;
//   naive     every stage Func compute_root with a plain 16x16 gpu_tile over its first two
//             dimensions, everything else serial inside the thread: the floor to beat;
//   manual    the expert GPU schedule written in the generator itself.
// naive and manual only make sense for a GPU target and without an autoscheduler; anything else
// is refused with an error that names the generator, the value and the target. Generators pass
// GPUSCHED_GENERATOR_AUTOSCHEDULED() (core/halide_compat.h) for whether an autoscheduler was asked.
#pragma once

#include "Halide.h"

#include "core/halide_compat.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace gpusched_apps {

enum class ScheduleKind { None, CpuRoot, Naive, Manual };

// Which values of `schedule` an app offers besides none, naive and manual.
enum class ScheduleMenu { GpuOnly, WithCpuRoot };

// Parses the `schedule` GeneratorParam; throws Halide::CompileError (the generator exits non-zero
// with the message) for a value the app does not offer, for a GPU schedule asked of a target
// without a GPU feature, and for a GPU schedule combined with an autoscheduler (it would replace
// the schedule, and the result would not be the one asked for).
inline ScheduleKind parse_schedule(const std::string &app, const std::string &value,
                                   const Halide::Target &target, bool autoscheduled,
                                   ScheduleMenu menu = ScheduleMenu::WithCpuRoot) {
    const bool cpu_root_offered = menu == ScheduleMenu::WithCpuRoot;
    if (value == "none") return ScheduleKind::None;
    if (value == "cpu_root" && cpu_root_offered) return ScheduleKind::CpuRoot;
    if (value != "naive" && value != "manual") {
        throw Halide::CompileError(app + ": unknown schedule=" + value + " (expected none, " +
                                   (cpu_root_offered ? "cpu_root, " : "") + "naive or manual)");
    }
    if (!target.has_gpu_feature()) {
        throw Halide::CompileError(
            app + ": schedule=" + value + " is a GPU schedule but target " + target.to_string() +
            " has no GPU feature; use e.g. target=host-cuda-cuda_capability_86 or host-opencl, "
            "or schedule=none for an autoscheduler");
    }
    if (autoscheduled) {
        throw Halide::CompileError(app + ": schedule=" + value +
                                   " cannot be combined with an autoscheduler (use schedule=none)");
    }
    return value == "naive" ? ScheduleKind::Naive : ScheduleKind::Manual;
}

// Puts every pure dimension except the first two innermost, keeping their relative order, so a
// 2-D tiling over (d0, d1) leaves them as serial loops inside one thread.
inline void move_extra_dims_inside(Halide::Stage s, const std::vector<Halide::Var> &args,
                                   const std::vector<Halide::RVar> &rvars = {}) {
    std::vector<Halide::VarOrRVar> order;
    for (const auto &r : rvars)
        order.emplace_back(r);
    for (size_t i = 2; i < args.size(); i++)
        order.emplace_back(args[i]);
    order.emplace_back(args[0]);
    order.emplace_back(args[1]);
    if (order.size() > 2) s.reorder(order);
}

// The naive GPU schedule of one Func: compute_root, a 16x16 gpu_tile of its pure definition over
// (args[0], args[1]) (a 1-D Func gets a 16-wide 1-D tile). Tails are guarded, so it is correct for
// any size, tiny tables and small test images included. Update definitions are the caller's
// business, since their pure dimensions differ per app.
inline void naive_gpu(Halide::Func f) {
    f.compute_root();
    std::vector<Halide::Var> args = f.args();
    if (args.size() == 1) {
        Halide::Var o("naive_o"), i("naive_i");
        f.gpu_tile(args[0], o, i, 16, Halide::TailStrategy::GuardWithIf);
        return;
    }
    move_extra_dims_inside(f, args);
    Halide::Var xo("naive_xo"), yo("naive_yo"), xi("naive_xi"), yi("naive_yi");
    f.gpu_tile(args[0], args[1], xo, yo, xi, yi, 16, 16, Halide::TailStrategy::GuardWithIf);
}

// Same for an update stage whose first two LHS arguments are the pure vars args[0], args[1];
// rvars (and remaining pure vars) become serial loops inside the thread.
inline void naive_gpu_update(Halide::Stage s, const std::vector<Halide::Var> &args,
                             const std::vector<Halide::RVar> &rvars) {
    move_extra_dims_inside(s, args, rvars);
    Halide::Var xo("naive_uxo"), yo("naive_uyo"), xi("naive_uxi"), yi("naive_uyi");
    s.gpu_tile(args[0], args[1], xo, yo, xi, yi, 16, 16, Halide::TailStrategy::GuardWithIf);
}

} // namespace gpusched_apps
