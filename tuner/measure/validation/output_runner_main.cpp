// The main() of the small programs gpusched links around a compiled pipeline
// to check what it computes: `runner out_dir [name=value ...]` fills every
// input (random, seeded; scalars from their estimates), runs the pipeline
// once on its estimated output size, and writes each output as a raw dense
// file `out_dir/<output name>.raw` (header: see output_file.h in tuner/).
//
// Built once with gpusched (as an archive) and linked, per sample, with the
// sample's NAME.registration.cpp and NAME.a. It uses Halide's RunGen.h for
// argument parsing, bounds queries and input filling, but not RunGen's image
// saving: that reshapes a GPU output before copying it to the host, which
// crashes for 1-D outputs (DESIGN.md). Here every output is copied to the
// host first and written as it is.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#define HALIDE_NO_PNG
#define HALIDE_NO_JPEG
#include "RunGen.h"

#include "tuner/measure/validation/gpu_api_preload.h"
#include "tuner/measure/validation/output_file_writer.h"
#include "tuner/measure/validation/runner_main_support.h"

using gpusched::runner_main::registered;

int main(int argc, char **argv) {
    using namespace Halide::RunGen;
    gpusched::preload_gpu_apis();
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR [seed=N] [input_name=value ...]\n", argv[0]);
        return 2;
    }
    if (!registered.argv_call) {
        std::fprintf(stderr, "no pipeline is linked into this runner\n");
        return 2;
    }
    const std::string out_dir = argv[1];
    std::string seed = "1";
    RunGen r(registered.argv_call, registered.metadata);
    r.set_quiet(true);
    std::set<std::string> seen;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto eq = a.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "bad argument '%s' (want name=value)\n", argv[i]);
            return 2;
        }
        if (a.substr(0, eq) == "seed") {
            seed = a.substr(eq + 1);
            continue;
        }
        r.parse_one(a.substr(0, eq), a.substr(eq + 1), &seen);
    }
    // Every output is produced; name each one so RunGen does not complain,
    // but it never saves them itself.
    const std::string buffers = "random:" + seed + ":estimate_then_auto";
    r.validate(seen, buffers, "estimate", /*ok_to_omit_outputs=*/true);
    r.load_inputs("estimate");
    std::vector<Shape> shapes = r.run_bounds_query();
    r.adapt_input_buffers(shapes);
    r.allocate_output_buffers(shapes);
    for (auto &out : r.run_for_output()) {
        if (!gpusched::write_output_file(out_dir + "/" + out.name + ".raw", out.actual)) {
            std::fprintf(stderr, "cannot write %s/%s.raw\n", out_dir.c_str(), out.name.c_str());
            return 1;
        }
    }
    // Every output is written: leave without destructors, as the benchmark
    // harness does (an OpenCL driver's teardown after main can hang).
    std::fflush(nullptr);
    std::_Exit(0);
}
