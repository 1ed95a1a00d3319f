#pragma once
// Runs a Halide generator executable (built with GenGen) as a subprocess and
// turns what went wrong into one line a user can act on: the generator is
// missing or not executable, the generator name is unknown (with the names it
// does have), a GeneratorParam is bad, Halide reported a user error, it
// crashed, or it timed out.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/generate/generator_protocol.h"
#include "tuner/subprocess.h"

namespace gpusched {

enum class GeneratorFailure { None, NotFound, NotExecutable, UnknownGenerator, Error, Crashed, TimedOut };

struct GeneratorInvocation {
    std::string generator_path;
    std::string generator_name;
    std::string output_dir;
    std::vector<std::string> emit;             // -e list: static_library, h, registration, schedule, ...
    std::string target;                        // Halide target string
    std::map<std::string, std::string> params; // GeneratorParams, key=value
    std::optional<std::string> plugin_path;    // -p
    std::optional<std::string> autoscheduler;  // autoscheduler_args(): how this Halide selects it
    std::map<std::string, std::string> autoscheduler_options; // its autoscheduler.KEY=VALUE options
    std::map<std::string, std::string> env;
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    std::optional<std::uint64_t> memory_limit_bytes; // ProcessSpec's; none: no limit
};

struct GeneratorOutcome {
    GeneratorFailure failure = GeneratorFailure::None;
    std::string message; // one line, empty on success
    ProcessResult process;

    bool ok() const { return failure == GeneratorFailure::None; }
};

// Checks the executable exists and is executable, and that it offers the
// named generator. Returns a failed outcome with a clear message, or None.
GeneratorOutcome preflight_generator(const std::string &generator_path, const std::string &generator_name,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The generator names an executable offers (GenGen lists them when run
// without -g). Empty if it could not be asked; then *why_none says why,
// where the process itself tells: the dynamic loader refused to start it (a
// shared library missing, as on a machine without the library it was built
// against), it was killed by a signal (a crash), or it did not answer in time.
std::vector<std::string> list_generators(const std::string &generator_path,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                         std::string *why_none = nullptr);

GeneratorOutcome run_generator(const GeneratorInvocation &inv);

// Runs the generator once with these params and target and the plugin's
// probe autoscheduler (core/params_probe.h), which stops it once it has read
// its params and built its pipeline: a param it does not know, or a value it
// refuses, is reported before any work is stored, at the cost of the
// pipeline's construction (nothing is lowered). Without the gpusched plugin
// (`plugin_path` empty) there is no probe, and nothing is checked.
// `scratch_dir` is created and removed.
GeneratorOutcome check_generator_params(const std::string &generator_path, const std::string &generator_name,
                                        const std::map<std::string, std::string> &params,
                                        const std::string &target, const std::string &plugin_path,
                                        const std::string &scratch_dir, std::chrono::milliseconds timeout);

// The argv run_generator uses (exposed for logs and tests).
std::vector<std::string> generator_argv(const GeneratorInvocation &inv);

// The most useful line of a Halide generator's stderr ("Error: ..." text).
std::string summarize_generator_error(const std::string &stderr_text);

} // namespace gpusched
