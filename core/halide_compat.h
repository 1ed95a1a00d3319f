#pragma once
// The C++ side of what differs between the Halide releases gpusched builds
// against: 14 (Debian 12), 19 (Debian 13) and 21 (Debian's next release).
// cmake/halide_version.cmake has the build side. Everything else in the tree
// is written once, against the API the three share; a difference found later
// belongs here, not in an #if next to its use.
//
//   - autoschedulers: Halide 14 calls them with MachineParams and names the
//     scheduler in the results; from 16 on they get AutoschedulerParams, a
//     name and the generator's `autoscheduler.KEY=VALUE` options, and
//     Halide fills in the results' name itself;
//   - as_const_int returns a pointer in 14 and a std::optional from 16;
//   - a user error: ErrorReport is a class in 14 and 19 and a template in 21,
//     and only the _halide_user_assert macro is spelled the same in all;
//   - a generator learns it is autoscheduled from its `auto_schedule`
//     GeneratorParam in 14 and from using_autoscheduler() from 16;
//   - bounds inference: a read whose extent moves with the loops outside
//     its compute level (max_filter's column read through `1 << lvl(t)`)
//     is unbounded in 14 and bounded by an expression in those loops in 19,
//     which Halide then cannot allocate in registers (kRegionsMayVaryPerThread).

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <Halide.h>

// Halide 15 added HALIDE_VERSION_MAJOR; 14, the oldest supported, has none.
#ifdef HALIDE_VERSION_MAJOR
#define GPUSCHED_HALIDE_MAJOR HALIDE_VERSION_MAJOR
#else
#define GPUSCHED_HALIDE_MAJOR 14
#endif

namespace gpusched {

// Whether Halide may bound a region below root by a size that varies with the
// loops outside its compute level (true from Halide 16 on; see above): the
// function DAG then refuses such regions itself (FunctionDAG:
// fixed_size_below_root), where Halide 14's own bounds already did.
constexpr bool kRegionsMayVaryPerThread = GPUSCHED_HALIDE_MAJOR >= 16;

// How a Func computed per GPU thread (in registers, which need a constant
// size) gets the fixed extent of its largest region: Func::bound_storage from
// Halide 16 on, which fixes the allocation and checks it with one assertion
// per dimension; Halide 14 has only bound_extent, which fixes what is computed
// too and asserts twice per dimension. In a CUDA kernel, four assertions in a
// row make Halide's LLVM code generator batch them (codegen_asserts), which
// calls the host runtime's error function from the kernel, and Halide 21
// refuses to compile it ("halide_error_explicit_bounds_too_small is marked as
// taking user_context, but is not in the runtime module"): a Func upsampled in
// x and y per thread (random_pipeline seed 6).
constexpr const char *kRegisterBoundMethod = GPUSCHED_HALIDE_MAJOR >= 16 ? "bound_storage" : "bound_extent";
inline void bound_register_storage(Halide::Func &f, const Halide::Var &v, int extent) {
#if GPUSCHED_HALIDE_MAJOR >= 16
    f.bound_storage(v, extent);
#else
    f.bound_extent(v, extent);
#endif
}

// The `autoscheduler.KEY=VALUE` options a generator was given (KEY without
// the prefix). Always empty on Halide 14, which has no such options.
using AutoschedulerOptions = std::map<std::string, std::string>;

// An autoscheduler as gpusched writes it, whatever the Halide.
using AutoschedulerFn = void (*)(const Halide::Pipeline &, const Halide::Target &,
                                 const AutoschedulerOptions &, Halide::AutoSchedulerResults *);

namespace detail {
template <AutoschedulerFn F>
#if GPUSCHED_HALIDE_MAJOR >= 16
void halide_entry(const Halide::Pipeline &p, const Halide::Target &t,
                  const Halide::AutoschedulerParams &params, Halide::AutoSchedulerResults *results) {
    F(p, t, params.extra, results);
}
#else
void halide_entry(const Halide::Pipeline &p, const Halide::Target &t, const Halide::MachineParams &,
                  Halide::AutoSchedulerResults *results) {
    F(p, t, AutoschedulerOptions{}, results);
}
#endif
} // namespace detail

// Registers F under `name` (a generator then selects it with
// `autoscheduler=name` from Halide 16 on, `-s name` on Halide 14).
template <AutoschedulerFn F> void register_autoscheduler(const std::string &name) {
    Halide::Pipeline::add_autoscheduler(name, detail::halide_entry<F>);
}

// Runs the autoscheduler registered as `name` on p with `options` (Halide
// 14 takes none) and returns its results: an autoscheduler calling another.
inline Halide::AutoSchedulerResults apply_named_autoscheduler(const Halide::Pipeline &p,
                                                              const Halide::Target &t,
                                                              const std::string &name,
                                                              const AutoschedulerOptions &options) {
#if GPUSCHED_HALIDE_MAJOR >= 16
    return p.apply_autoscheduler(t, Halide::AutoschedulerParams(name, options));
#else
    (void)options;
    Halide::Pipeline handle = p; // 14's auto_schedule is not const; a handle shares the pipeline
    return handle.auto_schedule(name, t);
#endif
}

// Names the scheduler in its results where Halide expects the autoscheduler
// to (14); later Halides set it from the generator's arguments.
inline void name_results(Halide::AutoSchedulerResults *results, const std::string &name) {
#if GPUSCHED_HALIDE_MAJOR >= 16
    (void)results;
    (void)name;
#else
    results->scheduler_name = name;
#endif
}

// e's value if it is a constant integer.
inline std::optional<int64_t> const_int(const Halide::Expr &e) {
#if GPUSCHED_HALIDE_MAJOR >= 16
    return Halide::Internal::as_const_int(e);
#else
    const int64_t *v = Halide::Internal::as_const_int(e);
    return v ? std::optional<int64_t>(*v) : std::nullopt;
#endif
}

// The suffix of a GPU thread loop's name in dimension d (0: x, 1: y, 2: z)
// once Halide has canonicalized its GPU loop names; the offload reads a
// kernel's threads from the loops whose names end with it. Halide 18 on
// names them through gpu_thread_name ("thread_id_x", made unique), earlier
// ones ".__thread_id_x".
inline std::string gpu_thread_loop_suffix(int d) {
#if GPUSCHED_HALIDE_MAJOR >= 18
    return Halide::Internal::gpu_thread_name(d);
#else
    static const char *names[3] = {".__thread_id_x", ".__thread_id_y", ".__thread_id_z"};
    return names[d];
#endif
}

// Fails the way Halide's own user errors do: a CompileError when Halide
// throws (its library does), else the message on stderr and an abort.
[[noreturn]] inline void halide_user_error(const std::string &message) {
    _halide_user_assert(false) << message;
    std::abort(); // not reached: the report above never returns
}

} // namespace gpusched

// True inside a Generator's generate() when the generator was asked to use
// an autoscheduler (a macro: using_autoscheduler() is protected).
#if GPUSCHED_HALIDE_MAJOR >= 16
#define GPUSCHED_GENERATOR_AUTOSCHEDULED() (this->using_autoscheduler())
#else
#define GPUSCHED_GENERATOR_AUTOSCHEDULED() (static_cast<bool>(this->auto_schedule))
#endif
