#include "tuner/generate/shared_runtime.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "tuner/bundle_c_library.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

constexpr const char *kRuntimeName = "gpusched_halide_runtime";

struct Entry {
    std::mutex mutex; // held while the runtime is built: others wait for it
    std::optional<SharedRuntime> built;
};

std::shared_ptr<Entry> entry_for(const std::string &key) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<Entry>> entries;
    std::lock_guard<std::mutex> lock(mutex);
    auto &e = entries[key];
    if (!e) e = std::make_shared<Entry>();
    return e;
}

// The generator build matters (its Halide compiled the runtime): a rebuilt
// generator is a new key.
std::string key_of(const std::string &generator_path, const std::string &target) {
    std::error_code ec;
    return generator_path + "\n" + std::to_string(fs::file_size(generator_path, ec)) + "\n" +
           std::to_string(fs::last_write_time(generator_path, ec).time_since_epoch().count()) + "\n" + target;
}

const std::string &archiver() {
    static const std::string path = find_executable("ar").value_or("");
    return path;
}

bool applies(const GeneratorInvocation &inv) {
    // A multi-target build dispatches at run time among its own runtimes;
    // a no_runtime build already leaves the runtime to its user.
    return !archiver().empty() && inv.target.find(',') == std::string::npos &&
           inv.target.find("no_runtime") == std::string::npos &&
           std::find(inv.emit.begin(), inv.emit.end(), "static_library") != inv.emit.end();
}

} // namespace

SharedRuntime shared_runtime(const std::string &generator_path, const std::string &target,
                             const std::string &cache_dir, std::chrono::milliseconds timeout) {
    std::shared_ptr<Entry> e = entry_for(key_of(generator_path, target));
    std::lock_guard<std::mutex> lock(e->mutex);
    std::error_code ec;
    if (e->built && (!e->built->ok() || fs::exists(e->built->object, ec))) return *e->built;
    // One directory per target under cache_dir; the target spelled as a
    // file name would be long, so it is numbered by its hash.
    const std::string dir = cache_dir + "/" + std::to_string(std::hash<std::string>{}(target));
    fs::create_directories(dir, ec);
    ProcessSpec spec;
    spec.argv = through_bundle_loader(
        {generator_path, "-r", kRuntimeName, "-o", dir, "-e", "object", "target=" + target});
    spec.timeout = timeout;
    const ProcessResult r = run_process(spec);
    SharedRuntime out;
    out.object = dir + "/" + kRuntimeName + ".o";
    if (!r.ok())
        out.failure = "building the Halide runtime for " + target + " failed (" + r.describe_failure() +
                      "): " + last_lines(r.err, 1);
    else if (!fs::exists(out.object, ec))
        out.failure = "the generator's -r mode wrote no " + out.object;
    e->built = out;
    return out;
}

GeneratorOutcome run_generator_sharing_runtime(const GeneratorInvocation &inv, const std::string &cache_dir) {
    if (!applies(inv)) return run_generator(inv);
    const SharedRuntime runtime = shared_runtime(inv.generator_path, inv.target, cache_dir, inv.timeout);
    // Without a runtime of its own to add, the generator compiles one.
    if (!runtime.ok()) return run_generator(inv);
    GeneratorInvocation lean = inv;
    lean.target += "-no_runtime";
    GeneratorOutcome o = run_generator(lean);
    if (!o.ok()) return o;
    ProcessSpec ar;
    const std::string library = inv.output_dir + "/" + inv.generator_name + ".a";
    ar.argv = {archiver(), "rs", library, runtime.object};
    ar.timeout = inv.timeout;
    const ProcessResult r = run_process(ar);
    if (!r.ok()) {
        o.failure = GeneratorFailure::Error;
        o.message = "adding the Halide runtime to '" + library + "' failed (" + r.describe_failure() +
                    "): " + last_lines(r.err, 1);
    }
    return o;
}

} // namespace gpusched
