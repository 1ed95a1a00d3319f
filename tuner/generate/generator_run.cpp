#include "tuner/generate/generator_run.h"

#include <filesystem>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "core/params_probe.h"
#include "tuner/bundle_c_library.h"

namespace gpusched {
namespace fs = std::filesystem;

std::vector<std::string> list_generators(const std::string &generator_path, std::chrono::milliseconds timeout,
                                         std::string *why_none) {
    // GenGen, given no -g, prints "... available Generators are:" followed by
    // one indented name per line, and exits.
    ProcessSpec spec;
    spec.argv = through_bundle_loader({generator_path});
    spec.timeout = timeout;
    ProcessResult r = run_process(spec);
    std::vector<std::string> names;
    std::istringstream in(r.err + "\n" + r.out);
    std::string line;
    bool listing = false;
    while (std::getline(in, line)) {
        if (line.find("available Generators are:") != std::string::npos) {
            listing = true;
            continue;
        }
        if (!listing) continue;
        if (line.rfind("    ", 0) != 0) break;
        auto b = line.find_first_not_of(' ');
        if (b != std::string::npos) names.push_back(line.substr(b));
    }
    if (!names.empty() || !why_none) return names;
    // glibc's loader: "<program>: error while loading shared libraries: <lib>: <why>".
    const auto loader = r.err.find("error while loading shared libraries: ");
    if (loader != std::string::npos) {
        const auto start = loader + std::string("error while loading shared libraries: ").size();
        *why_none = "cannot start, a shared library it needs is missing: " +
                    r.err.substr(start, r.err.find('\n', start) - start);
    } else if (r.timed_out) {
        *why_none =
            "did not answer within " + std::to_string((timeout.count() + 999) / 1000) +
            " s when asked to list its generators (run without arguments, a generator prints them and exits)";
    } else if (r.term_signal != 0) {
        *why_none = "crashed when asked to list its generators: " + r.describe_failure();
    }
    return names;
}

GeneratorOutcome preflight_generator(const std::string &path, const std::string &name,
                                     std::chrono::milliseconds timeout) {
    GeneratorOutcome o;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        o.failure = GeneratorFailure::NotFound;
        o.message = "generator '" + path + "' does not exist";
        return o;
    }
    if (!S_ISREG(st.st_mode) || access(path.c_str(), X_OK) != 0) {
        o.failure = GeneratorFailure::NotExecutable;
        o.message = "generator '" + path + "' is not an executable file";
        return o;
    }
    std::string why_none;
    auto names = list_generators(path, timeout, &why_none);
    if (names.empty()) {
        o.failure = GeneratorFailure::Error;
        o.message = why_none.empty()
                        ? "'" + path + "' does not look like a Halide generator (it lists no generators)"
                        : "generator '" + path + "' " + why_none;
        return o;
    }
    for (const auto &n : names)
        if (n == name) return o;
    o.failure = GeneratorFailure::UnknownGenerator;
    std::string have;
    for (const auto &n : names)
        have += (have.empty() ? "" : ", ") + n;
    o.message = "'" + path + "' has no generator named '" + name + "' (it has: " + have + ")";
    return o;
}

std::vector<std::string> generator_argv(const GeneratorInvocation &inv) {
    std::vector<std::string> argv = {inv.generator_path, "-g", inv.generator_name, "-o", inv.output_dir};
    if (!inv.emit.empty()) {
        std::string e;
        for (const auto &x : inv.emit)
            e += (e.empty() ? "" : ",") + x;
        argv.push_back("-e");
        argv.push_back(e);
    }
    if (inv.plugin_path) {
        argv.push_back("-p");
        argv.push_back(*inv.plugin_path);
    }
    argv.push_back("target=" + inv.target);
    if (inv.autoscheduler)
        for (std::string &a : autoscheduler_args(*inv.autoscheduler, inv.autoscheduler_options))
            argv.push_back(std::move(a));
    for (const auto &[k, v] : inv.params)
        argv.push_back(k + "=" + v);
    return argv;
}

std::string summarize_generator_error(const std::string &err) {
    // Halide reports user errors as "Error: <message>" (possibly after
    // "Unhandled exception: "), with the message on the same or next line.
    std::istringstream in(err);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
        lines.push_back(line);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        auto pos = lines[i].find("Error:");
        if (pos == std::string::npos) continue;
        std::string msg = lines[i].substr(pos + 6);
        auto b = msg.find_first_not_of(' ');
        msg = b == std::string::npos ? "" : msg.substr(b);
        // The message continues until a blank line.
        for (std::size_t j = i + 1; j < lines.size() && !lines[j].empty(); ++j) {
            msg += (msg.empty() ? "" : " ") + lines[j];
        }
        if (!msg.empty()) return msg;
    }
    return last_lines(err, 2);
}

GeneratorOutcome run_generator(const GeneratorInvocation &inv) {
    GeneratorOutcome o;
    std::error_code ec;
    fs::create_directories(inv.output_dir, ec);
    ProcessSpec spec;
    spec.argv = through_bundle_loader(generator_argv(inv));
    spec.env = inv.env;
    spec.timeout = inv.timeout;
    spec.memory_limit_bytes = inv.memory_limit_bytes;
    o.process = run_process(spec);
    const ProcessResult &r = o.process;
    const std::string who = "generator '" + inv.generator_name + "'";
    if (!r.started) {
        o.failure = GeneratorFailure::NotExecutable;
        o.message = who + " " + r.describe_failure();
    } else if (r.timed_out) {
        o.failure = GeneratorFailure::TimedOut;
        o.message = who + " timed out after " + std::to_string(inv.timeout.count() / 1000) + " s";
    } else if (r.term_signal != 0 && inv.memory_limit_bytes &&
               r.err.find("std::bad_alloc") != std::string::npos) {
        o.failure = GeneratorFailure::Crashed;
        o.message = who + " ran out of the " + std::to_string(*inv.memory_limit_bytes >> 20) +
                    " MiB of memory it is allowed (" + r.describe_failure() + ")";
    } else if (r.term_signal != 0) {
        o.failure = GeneratorFailure::Crashed;
        o.message = who + " crashed (" + r.describe_failure() + "): " + last_lines(r.err, 1);
    } else if (r.exit_code != 0) {
        if (r.err.find("Generator not found") != std::string::npos) {
            o.failure = GeneratorFailure::UnknownGenerator;
            o.message = "no generator named '" + inv.generator_name + "' in '" + inv.generator_path + "'";
        } else {
            o.failure = GeneratorFailure::Error;
            o.message = who + " failed: " + summarize_generator_error(r.err);
        }
    }
    return o;
}

GeneratorOutcome check_generator_params(const std::string &generator_path, const std::string &generator_name,
                                        const std::map<std::string, std::string> &params,
                                        const std::string &target, const std::string &plugin_path,
                                        const std::string &scratch_dir, std::chrono::milliseconds timeout) {
    if (plugin_path.empty()) return {};
    GeneratorInvocation inv;
    inv.generator_path = generator_path;
    inv.generator_name = generator_name;
    inv.output_dir = scratch_dir;
    inv.emit = {"h"};
    inv.target = target;
    inv.params = params;
    inv.plugin_path = plugin_path;
    inv.autoscheduler = "gpusched_probe";
    inv.timeout = timeout;
    std::error_code ec;
    std::filesystem::create_directories(scratch_dir, ec);
    GeneratorOutcome g = run_generator(inv);
    std::filesystem::remove_all(scratch_dir, ec);
    // The probe's own stop is the success: the params were read, the
    // pipeline built.
    if (!g.ok() && (g.process.err + g.message).find(kParamsProbeReached) != std::string::npos) return {};
    return g;
}

} // namespace gpusched
