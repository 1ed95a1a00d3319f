// The bundle's launcher (scripts/bundle-launcher.sh) chooses which C++
// runtime and which C library gpusched's processes load: the machine's
// libstdc++ where it defines every symbol version the bundle's does, the
// bundle's own (lib/cxx-runtime) where it does not; the machine's glibc
// where it is as new as the bundle's, the bundle's own loader and glibc
// (lib/c-runtime) where it is older. Each test lays out a bundle around the
// launcher and the built gpusched, with this machine's libraries as the
// bundle's copies and a `needs` or `version` file that this machine does or
// does not satisfy, runs `bin/gpusched --version` under the loader's trace
// (LD_DEBUG=libs) and reads which libraries the process initialized.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/bundle_c_library.h"
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

// This machine's glibc version ("2.36"), as the launcher reads it.
std::string machine_glibc_version() {
    ProcessSpec spec;
    spec.argv = {"getconf", "GNU_LIBC_VERSION"};
    const ProcessResult r = run_process(spec);
    REQUIRE(r.ok());
    const auto space = r.out.find(' ');
    REQUIRE(space != std::string::npos);
    return r.out.substr(space + 1, r.out.find_first_of(" \n", space + 1) - space - 1);
}

struct LauncherRun {
    std::string bundle;    // the bundle's root
    std::string libstdcxx; // the libstdc++ gpusched initialized
    std::string libc;      // the libc gpusched initialized
    ProcessResult result;
};

// What a layout's lib/c-runtime holds: nothing, or this machine's loader
// and glibc under a version the launcher compares with the machine's.
struct CRuntime {
    bool present = false;
    bool with_loader = true;
    std::string version;
};

// A bundle whose lib/cxx-runtime holds this machine's C++ runtime and says
// it needs `needs`, and whose lib/c-runtime is `c_runtime`; runs its
// bin/gpusched --version with `env`.
LauncherRun run_launcher(const test::TempDir &dir, const std::string &needs, const CRuntime &c_runtime = {},
                         std::map<std::string, std::string> env = {}) {
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
    if (c_runtime.present) {
        const std::string to = run.bundle + "/lib/c-runtime/";
        fs::create_directories(to);
        for (const char *name : {"libc.so", "libm.so", "libmvec.so"}) {
            const std::string here = loaded_here(name);
            if (!here.empty()) fs::copy_file(here, to + fs::path(here).filename().string());
        }
        if (c_runtime.with_loader)
            fs::copy_file(loaded_here("ld-linux-x86-64.so"), to + "ld-linux-x86-64.so.2");
        test::write_file(to + "version", c_runtime.version + "\n");
    }

    ProcessSpec spec;
    spec.argv = {"sh", run.bundle + "/bin/gpusched", "--version"};
    spec.env = std::move(env);
    spec.env["LD_DEBUG"] = "libs";
    spec.timeout = std::chrono::minutes(1);
    run.result = run_process(spec);
    std::istringstream trace(run.result.err);
    const std::string key = "calling init: ";
    for (std::string line; std::getline(trace, line);) {
        const auto at = line.find(key);
        if (at == std::string::npos) continue;
        const std::string lib = line.substr(at + key.size());
        if (fs::path(lib).filename().string().rfind("libstdc++.so", 0) == 0) run.libstdcxx = lib;
        // The launcher's shell initializes the machine's libc first; gpusched's comes last.
        if (fs::path(lib).filename().string().rfind("libc.so", 0) == 0) run.libc = lib;
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

TEST_CASE("the bundle's launcher starts gpusched on the bundle's own dynamic loader and C library when the "
          "machine's glibc is older than the bundle's",
          "[bundle]") {
    test::TempDir dir;
    // A version no glibc has yet stands for a bundle built on a newer Debian.
    const LauncherRun run =
        run_launcher(dir, newest_glibcxx(loaded_here("libstdc++.so")), {true, true, "2.999"});
    INFO(run.result.describe_failure() << "\n" << last_lines(run.result.err, 30));
    REQUIRE(run.result.ok());
    CHECK(run.result.out.find("gpusched") != std::string::npos);
    CHECK(run.libc == run.bundle + "/lib/c-runtime/libc.so.6");
}

TEST_CASE(
    "the bundle's launcher leaves gpusched on the machine's C library when it is as new as the bundle's",
    "[bundle]") {
    test::TempDir dir;
    const LauncherRun run =
        run_launcher(dir, newest_glibcxx(loaded_here("libstdc++.so")), {true, true, machine_glibc_version()});
    INFO(run.result.describe_failure() << "\n" << last_lines(run.result.err, 30));
    REQUIRE(run.result.ok());
    REQUIRE_FALSE(run.libc.empty());
    CHECK(run.libc.rfind(run.bundle, 0) != 0);
}

TEST_CASE("the bundle's launcher uses the bundle's C library when GPUSCHED_BUNDLE_LIBC=bundle asks for it, "
          "however new the machine's",
          "[bundle]") {
    test::TempDir dir;
    const LauncherRun run = run_launcher(dir, newest_glibcxx(loaded_here("libstdc++.so")),
                                         {true, true, "2.1"}, {{"GPUSCHED_BUNDLE_LIBC", "bundle"}});
    INFO(run.result.describe_failure() << "\n" << last_lines(run.result.err, 30));
    REQUIRE(run.result.ok());
    CHECK(run.libc == run.bundle + "/lib/c-runtime/libc.so.6");
}

TEST_CASE(
    "the bundle's launcher refuses a GPUSCHED_BUNDLE_LIBC other than auto, bundle or machine in one line",
    "[bundle]") {
    test::TempDir dir;
    const LauncherRun run = run_launcher(dir, newest_glibcxx(loaded_here("libstdc++.so")),
                                         {true, true, "2.999"}, {{"GPUSCHED_BUNDLE_LIBC", "newest"}});
    CHECK(run.result.exit_code == 2);
    CHECK(run.result.err.find("error: GPUSCHED_BUNDLE_LIBC=newest: expected auto, bundle or machine\n") !=
          std::string::npos);
    CHECK(run.result.out.empty());
}

TEST_CASE("the bundle's launcher says in one line that a bundle needing its own C library carries no loader",
          "[bundle]") {
    test::TempDir dir;
    const LauncherRun run =
        run_launcher(dir, newest_glibcxx(loaded_here("libstdc++.so")), {true, false, "2.999"});
    CHECK(run.result.exit_code == 1);
    CHECK(run.result.err.find(
              "is older than the bundle's (2.999), and the bundle carries no loader of its own") !=
          std::string::npos);
    CHECK(run.result.out.empty());
}

TEST_CASE("a program of the bundle starts through the loader the launcher chose, under its own name",
          "[bundle]") {
    const std::string loader = loaded_here("ld-linux-x86-64.so");
    REQUIRE_FALSE(loader.empty());
    const std::string c_runtime = fs::path(loader).parent_path().string();
    {
        test::ScopedEnv env({{"GPUSCHED_BUNDLE_LOADER", loader},
                             {"GPUSCHED_BUNDLE_LIBRARY_PATH", c_runtime},
                             {"GPUSCHED_BUNDLE_RUNTIME_PATH", c_runtime}});
        ProcessSpec spec;
        // The shell prints its $0 (its argv[0]) and the program its kernel runs.
        spec.argv = through_bundle_loader({"/bin/sh", "-c", "echo $0; readlink /proc/$$/exe"});
        const ProcessResult r = run_process(spec);
        INFO(r.describe_failure() << "\n" << r.err);
        REQUIRE(r.ok());
        CHECK(r.out == "/bin/sh\n" + fs::canonical(loader).string() + "\n");
        const auto flags = bundle_c_library_link_flags();
        CHECK(std::find(flags.begin(), flags.end(), "-Wl,--dynamic-linker=" + loader) != flags.end());
        CHECK(std::find(flags.begin(), flags.end(), "-B" + c_runtime + "/") != flags.end());
    }
    // Without the launcher's word, programs start as they are and link as usual.
    if (!std::getenv("GPUSCHED_BUNDLE_LOADER")) {
        CHECK(through_bundle_loader({"/bin/sh"}) == std::vector<std::string>{"/bin/sh"});
        CHECK(bundle_c_library_link_flags().empty());
    }
}
