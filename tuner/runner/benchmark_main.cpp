// The main() of the benchmark programs gpusched links around a compiled
// sample (tuner/runner/runner.h). One process times one sample:
//
//   bench OUT_DIR [seed=N] [--reference DIR] [--min-time S] [--min-reps N]
//         [--max-reps N] [--warmup N] [name=value ...]
//
// 1. Inputs as the validation runner makes them (RunGen.h: random with the
//    seed, at the generator's estimated sizes), so a reference build run by
//    output_runner_main.cpp with the same seed computed the same thing.
// 2. Inputs are copied to the device before anything is timed
//    (halide_copy_to_device with the device interface the sample's runtime
//    defines: CUDA, OpenCL, or none for a CPU build).
// 3. The first call (module load, the driver's or POCL's JIT) is timed on
//    its own and never counted. Its outputs are copied to the host, written
//    as OUT_DIR/<output>.raw and, with --reference, compared with the
//    reference's files: a mismatch ends the run with exit status 4 and the
//    difference, and nothing is timed.
// 4. Warm-up calls, then timed calls until both --min-time seconds in total
//    and --min-reps calls, or --max-reps calls. Each timed call is the
//    pipeline call plus halide_device_sync of every output: what a user of
//    the schedule waits for. RunGen's own benchmark mode syncs the outputs
//    too, but reports only the best time and leaves the first host-to-device
//    copy of the inputs inside its measurement loop; this one keeps every
//    time and reports min and median.
//
// Results: OUT_DIR/benchmark.json (times in ms, repetitions, first call,
// total time in the process). Exit status: 0 measured, 2 bad usage,
// 3 the pipeline failed (halide_error: its message on stderr, e.g. a CUDA or
// OpenCL error), 4 wrong output. A crash is a signal, a hang the driver's
// timeout.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#define HALIDE_NO_PNG
#define HALIDE_NO_JPEG
#include "RunGen.h"

#include "tuner/validation/gpu_api_preload.h"
#include "tuner/validation/output_file_writer.h"
#include "tuner/validation/output_file.h"
#include "tuner/validation/runner_main_support.h"

// Defined by the sample's Halide runtime when it was compiled for that
// device; weak, so one harness links with CUDA, OpenCL and CPU builds alike.
extern "C" const struct halide_device_interface_t *halide_cuda_device_interface() __attribute__((weak));
extern "C" const struct halide_device_interface_t *halide_opencl_device_interface() __attribute__((weak));

namespace {

using Clock = std::chrono::steady_clock;

using gpusched::runner_main::kExitPipelineFailed;
using gpusched::runner_main::registered;

constexpr int kExitUsage = 2;
constexpr int kExitWrongOutput = 4;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string json_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += ' ';
            continue;
        }
        out += c;
    }
    return out;
}

const halide_device_interface_t *device_interface(std::string &name) {
    if (halide_cuda_device_interface) {
        name = "cuda";
        return halide_cuda_device_interface();
    }
    if (halide_opencl_device_interface) {
        name = "opencl";
        return halide_opencl_device_interface();
    }
    name = "none";
    return nullptr;
}

} // namespace

int main(int argc, char **argv) {
    using namespace Halide::RunGen;
    const auto process_start = Clock::now();
    gpusched::preload_gpu_apis();
    if (argc < 2) {
        std::fprintf(stderr,
                     "usage: %s OUT_DIR [seed=N] [--reference DIR] [--min-time S] [--min-reps N] "
                     "[--max-reps N] [--warmup N] [input=value ...]\n",
                     argv[0]);
        return kExitUsage;
    }
    if (!registered.argv_call) {
        std::fprintf(stderr, "no pipeline is linked into this benchmark\n");
        return kExitUsage;
    }
    const std::string out_dir = argv[1];
    std::string seed = "1", reference;
    double min_time_s = 0.1;
    long min_reps = 3, max_reps = 1000, warmup = 1;
    RunGen r(registered.argv_call, registered.metadata);
    r.set_quiet(true);
    std::set<std::string> seen;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--", 0) == 0) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                return kExitUsage;
            }
            const std::string v = argv[++i];
            if (a == "--reference")
                reference = v;
            else if (a == "--min-time")
                min_time_s = std::atof(v.c_str());
            else if (a == "--min-reps")
                min_reps = std::atol(v.c_str());
            else if (a == "--max-reps")
                max_reps = std::atol(v.c_str());
            else if (a == "--warmup")
                warmup = std::atol(v.c_str());
            else {
                std::fprintf(stderr, "unknown option %s\n", a.c_str());
                return kExitUsage;
            }
            continue;
        }
        const auto eq = a.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "bad argument '%s' (want name=value)\n", argv[i]);
            return kExitUsage;
        }
        if (a.substr(0, eq) == "seed") {
            seed = a.substr(eq + 1);
            continue;
        }
        r.parse_one(a.substr(0, eq), a.substr(eq + 1), &seen);
    }
    if (min_reps < 1 || max_reps < min_reps || warmup < 0 || !(min_time_s >= 0)) {
        std::fprintf(stderr, "need 1 <= --min-reps <= --max-reps, --warmup >= 0, --min-time >= 0\n");
        return kExitUsage;
    }

    r.validate(seen, "random:" + seed + ":estimate_then_auto", "estimate", /*ok_to_omit_outputs=*/true);
    r.load_inputs("estimate");
    std::vector<Shape> shapes = r.run_bounds_query();
    r.adapt_input_buffers(shapes);
    r.allocate_output_buffers(shapes);

    // The argv the pipeline is called with; buffers by metadata index.
    std::vector<void *> filter_argv = r.build_filter_argv();
    const halide_filter_metadata_t *md = registered.metadata;
    std::vector<halide_buffer_t *> inputs, outputs;
    for (int i = 0; i < md->num_arguments; ++i) {
        auto *b = static_cast<halide_buffer_t *>(filter_argv[static_cast<std::size_t>(i)]);
        if (md->arguments[i].kind == halide_argument_kind_input_buffer) inputs.push_back(b);
        if (md->arguments[i].kind == halide_argument_kind_output_buffer) outputs.push_back(b);
    }
    std::string device;
    const halide_device_interface_t *interface = device_interface(device);
    const double setup_ms = ms_since(process_start); // arguments, inputs made, bounds query
    const auto copy_start = Clock::now();
    if (interface) {
        for (halide_buffer_t *b : inputs) {
            if (int err = halide_copy_to_device(nullptr, b, interface); err != 0) {
                std::fprintf(stderr, "copying an input to the %s device failed (Halide error %d)\n",
                             device.c_str(), err);
                return kExitPipelineFailed;
            }
        }
    }
    const double input_copy_ms = ms_since(copy_start);

    auto call = [&] {
        // halide_error ends the process (exit 3) before a non-zero return.
        if (int err = registered.argv_call(filter_argv.data()); err != 0) {
            std::fprintf(stderr, "the pipeline returned Halide error %d\n", err);
            std::exit(kExitPipelineFailed);
        }
        for (halide_buffer_t *b : outputs) {
            // A CPU build's outputs have no device to wait for (and
            // halide_device_sync calls that an error).
            if (!b->device_interface) continue;
            if (int err = halide_device_sync(nullptr, b); err != 0) {
                std::fprintf(stderr, "device_sync failed (Halide error %d)\n", err);
                std::exit(kExitPipelineFailed);
            }
        }
    };

    // First call: module load and JIT, and the outputs to check.
    const auto first_start = Clock::now();
    call();
    const double first_call_ms = ms_since(first_start);
    const auto check_start = Clock::now();
    std::string validation = "not run", validation_detail;
    for (int i = 0; i < md->num_arguments; ++i) {
        if (md->arguments[i].kind != halide_argument_kind_output_buffer) continue;
        std::string name = md->arguments[i].name;
        // RunGen drops a "$N" suffix from argument names; so do the files.
        if (name.size() > 2 && name[name.size() - 2] == '$') name = name.substr(0, name.size() - 2);
        Halide::Runtime::Buffer<> out(
            *static_cast<halide_buffer_t *>(filter_argv[static_cast<std::size_t>(i)]));
        const std::string path = out_dir + "/" + name + ".raw";
        if (!gpusched::write_output_file(path, out)) {
            std::fprintf(stderr, "cannot write %s\n", path.c_str());
            return kExitUsage;
        }
        if (reference.empty()) continue;
        gpusched::OutputComparison c;
        try {
            c = gpusched::compare_outputs(gpusched::read_output_file(reference + "/" + name + ".raw"),
                                          gpusched::read_output_file(path));
        } catch (const std::exception &e) {
            c.detail = e.what();
        }
        if (!validation_detail.empty()) validation_detail += "; ";
        validation_detail += name + ": " + c.detail;
        if (!c.passed())
            validation = "failed";
        else if (validation != "failed")
            validation = "passed";
    }

    const double check_ms = ms_since(check_start); // outputs copied back, written and compared

    auto write_result = [&](const std::string &body) {
        std::ofstream f(out_dir + "/benchmark.json");
        f << "{\"device_interface\": \"" << device << "\", \"validation\": \"" << validation
          << "\", \"validation_detail\": \"" << json_escape(validation_detail)
          << "\", \"first_call_ms\": " << first_call_ms << ", \"input_copy_ms\": " << input_copy_ms
          << ", \"setup_ms\": " << setup_ms << ", \"check_ms\": " << check_ms << body
          << ", \"process_ms\": " << ms_since(process_start) << "}\n";
        return static_cast<bool>(f);
    };
    if (validation == "failed") {
        write_result("");
        std::fprintf(stderr, "wrong output: %s\n", validation_detail.c_str());
        return kExitWrongOutput;
    }

    for (long i = 0; i < warmup; ++i)
        call();
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(std::min(max_reps, 100000L)));
    double total_ms = 0;
    while (static_cast<long>(times.size()) < max_reps &&
           (static_cast<long>(times.size()) < min_reps || total_ms < min_time_s * 1000.0)) {
        const auto t0 = Clock::now();
        call();
        const double ms = ms_since(t0);
        times.push_back(ms);
        total_ms += ms;
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    char body[512];
    std::snprintf(
        body, sizeof body,
        ", \"min_ms\": %.9g, \"median_ms\": %.9g, \"max_ms\": %.9g, \"reps\": %zu, \"warmup\": %ld, "
        "\"timed_ms\": %.9g",
        sorted.front(), median, sorted.back(), n, warmup, total_ms);
    if (!write_result(body)) {
        std::fprintf(stderr, "cannot write %s/benchmark.json\n", out_dir.c_str());
        return kExitUsage;
    }
    std::printf("%s: min %.6g ms, median %.6g ms over %zu reps\n", md->name, sorted.front(), median, n);
    return 0;
}
