// The bundle's launcher (scripts/bundle-launcher.sh) chooses which C++
// runtime gpusched's processes load: the machine's libstdc++ where it
// defines every symbol version the bundle's does, the bundle's own
// (lib/cxx-runtime) where it does not. Each test lays out a bundle around
// the launcher and the built gpusched, with this machine's libstdc++ as the
// bundle's copy and a `needs` file that this machine's copy does or does
// not satisfy, runs `bin/gpusched --version` under the loader's trace
// (LD_DEBUG=libs) and reads which libstdc++ the process initialized.

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// This process's own libstdc++ and libgcc_s, as the loader mapped them.
std::string loaded_here(const std::string &name_prefix) {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        const std::string path = line.substr(slash);
        if (fs::path(path).filename().string().rfind(name_prefix, 0) == 0) return path;
    }
    return {};
}

// The newest GLIBCXX_3.4.N a libstdc++ defines, as make-bundle.sh writes it.
std::string newest_glibcxx(const std::string &libstdcxx) {
    const std::string bytes = test::read_file(libstdcxx);
    const std::regex version("GLIBCXX_3\\.4\\.([0-9]+)");
    int newest = -1;
    for (auto it = std::sregex_iterator(bytes.begin(), bytes.end(), version); it != std::sregex_iterator();
         ++it)
        newest = std::max(newest, std::stoi((*it)[1].str()));
    return newest < 0 ? std::string{} : "GLIBCXX_3.4." + std::to_string(newest);
}

struct LauncherRun {
    std::string bundle;    // the bundle's root
    std::string libstdcxx; // the libstdc++ gpusched initialized
    ProcessResult result;
};

// A bundle whose lib/cxx-runtime holds this machine's C++ runtime and says
// it needs `needs`; runs its bin/gpusched --version.
LauncherRun run_launcher(const test::TempDir &dir, const std::string &needs) {
    const std::string machine_libstdcxx = loaded_here("libstdc++.so");
    const std::string machine_libgcc = loaded_here("libgcc_s.so");
    REQUIRE_FALSE(machine_libstdcxx.empty());
    REQUIRE_FALSE(machine_libgcc.empty());

    LauncherRun run;
    run.bundle = dir / "gpusched";
    for (const char *sub : {"bin", "libexec", "lib/cxx-runtime"})
        fs::create_directories(run.bundle + "/" + sub);
    fs::copy_file(GPUSCHED_TEST_SOURCE_DIR "/scripts/bundle-launcher.sh", run.bundle + "/bin/gpusched");
    fs::copy_file(GPUSCHED_BINARY, run.bundle + "/libexec/gpusched");
    fs::copy_file(machine_libstdcxx, run.bundle + "/lib/cxx-runtime/libstdc++.so.6");
    fs::copy_file(machine_libgcc, run.bundle + "/lib/cxx-runtime/libgcc_s.so.1");
    test::write_file(run.bundle + "/lib/cxx-runtime/needs", needs + "\n");

    ProcessSpec spec;
    spec.argv = {"sh", run.bundle + "/bin/gpusched", "--version"};
    spec.env = {{"LD_DEBUG", "libs"}};
    spec.timeout = std::chrono::minutes(1);
    run.result = run_process(spec);
    std::istringstream trace(run.result.err);
    const std::string key = "calling init: ";
    for (std::string line; std::getline(trace, line);) {
        const auto at = line.find(key);
        if (at == std::string::npos) continue;
        const std::string lib = line.substr(at + key.size());
        if (fs::path(lib).filename().string().rfind("libstdc++.so", 0) == 0) run.libstdcxx = lib;
    }
    return run;
}

} // namespace

TEST_CASE("the bundle's launcher gives gpusched the machine's libstdc++ when it defines every version the "
          "bundle's does",
          "[bundle]") {
    test::TempDir dir;
    const std::string needs = newest_glibcxx(loaded_here("libstdc++.so"));
    REQUIRE_FALSE(needs.empty());
    const LauncherRun run = run_launcher(dir, needs);
    INFO(run.result.describe_failure() << "\n" << last_lines(run.result.err, 30));
    REQUIRE(run.result.ok());
    CHECK(run.result.out.find("gpusched") != std::string::npos);
    REQUIRE_FALSE(run.libstdcxx.empty());
    CHECK(run.libstdcxx.rfind(run.bundle, 0) != 0);
}

TEST_CASE(
    "the bundle's launcher gives gpusched the bundle's own libstdc++ when the machine's lacks a version "
    "the bundle's defines",
    "[bundle]") {
    test::TempDir dir;
    // A version no libstdc++ defines yet stands for a bundle built with a
    // newer GCC than the machine's.
    const LauncherRun run = run_launcher(dir, "GLIBCXX_3.4.999");
    INFO(run.result.describe_failure() << "\n" << last_lines(run.result.err, 30));
    REQUIRE(run.result.ok());
    CHECK(run.result.out.find("gpusched") != std::string::npos);
    CHECK(run.libstdcxx == run.bundle + "/lib/cxx-runtime/libstdc++.so.6");
}
