// The relocatable bundle (scripts/make-bundle.sh, docs/bundle.md) on a
// machine like a GPU node: a bare Debian root made by
// scripts/in-bare-root.sh, with glibc, g++, xz-utils and POCL but no
// Halide and not the bundle's LLVM; once Debian 12 (glibc 2.36, as old as
// the oldest build machine's), once Debian 13, whose compiler, binutils, C
// library and POCL are newer than a Debian 12 bundle's, as a current GPU
// node's are. The test packs this build into the tarball, unpacks it in the
// root and runs One Shot and Top 5 on POCL from it, every process of the
// Top 5 traced by the dynamic loader (LD_DEBUG=libs), then checks from
// outside: the root really lacks Halide and the bundle's LLVM, every
// libHalide and LLVM a Halide process loaded came from the bundle, each
// process ran on the C library and libstdc++ the launcher should have
// chosen, the samples and the Li2018 baseline were measured and validated,
// and the database holds their times.
//
// In the Debian 12 root the bundle runs on its own dynamic loader and C
// library: a bundle built on Debian 13 (Halide 19 or 21) needs it there,
// and a Debian 12 bundle is made to use it (GPUSCHED_BUNDLE_LIBC=bundle) so
// that CI, which builds on Debian 12, runs that path too. In the Debian 13
// root the launcher chooses (its C library is as new as any bundle's here).

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "db/database.h"
#include "db/sample_store.h"
#include "test_support.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// Where the bundle lies inside the root: in-bare-root.sh mounts the work
// directory at /tmp.
const std::string kBundleInRoot = "/tmp/gpusched/";

ProcessResult run(std::vector<std::string> argv, std::chrono::minutes timeout,
                  std::map<std::string, std::string> env = {}) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = timeout;
    spec.env = std::move(env);
    return run_process(spec);
}

std::string describe(const ProcessResult &r) {
    return r.describe_failure() + "\nstdout:\n" + last_lines(r.out, 40) + "\nstderr:\n" +
           last_lines(r.err, 40);
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
    return lines;
}

bool name_starts(const std::string &path, const std::string &prefix) {
    return fs::path(path).filename().string().rfind(prefix, 0) == 0;
}

// A program in a loader trace, from its start to its exec or exit. A trace
// file is one process id, which runs more than one program only where a
// shell execs one: bin/gpusched, the bundle's launcher, execs gpusched or
// the bundle's loader.
struct ProgramImage {
    std::string program;           // "initialize program: ..."
    std::vector<std::string> libs; // what the loader initialized, in order
    bool loaded(const std::string &prefix) const {
        return std::any_of(libs.begin(), libs.end(),
                           [&](const std::string &l) { return name_starts(l, prefix); });
    }
    std::string first(const std::string &prefix) const {
        for (const auto &l : libs)
            if (name_starts(l, prefix)) return l;
        return {};
    }
    bool is_shell() const {
        const std::string name = fs::path(program).filename().string();
        return name == "sh" || name == "dash" || name == "bash";
    }
};

std::vector<ProgramImage> program_images(const std::string &trace) {
    std::vector<ProgramImage> images(1);
    const std::string init = "calling init: ", program = "initialize program: ";
    for (const auto &line : lines_of(trace)) {
        if (const auto at = line.find(program); at != std::string::npos) {
            images.back().program = line.substr(at + program.size());
        } else if (const auto at = line.find(init); at != std::string::npos) {
            // A shell loads nothing once it runs: what follows is the program it execs.
            if (images.back().is_shell()) images.emplace_back();
            images.back().libs.push_back(line.substr(at + init.size()));
        }
    }
    return images;
}

enum class CLibrary { ChosenByLauncher, Bundle };

// Packs this build, runs One Shot and Top 5 from the bundle in a bare root
// of the Debian `release` (in-bare-root.sh's GPUSCHED_BARE_ROOT_RELEASE) and
// checks what the file's header says.
void check_bundle_in_bare_root(const std::string &release, CLibrary c_library) {
    test::TempDir dir;
    const std::string work = dir / "root-tmp";
    fs::create_directories(work);

    // The tarball, as a user makes it; its size limit is part of the promise.
    const std::string tarball = work + "/gpusched-bundle.tar.xz";
    ProcessResult packed =
        run({GPUSCHED_TEST_SOURCE_DIR "/scripts/make-bundle.sh", GPUSCHED_TEST_BUILD_DIR, tarball},
            std::chrono::minutes(15));
    INFO("make-bundle.sh: " << describe(packed));
    REQUIRE(packed.ok());
    CHECK(fs::file_size(tarball) <= 60u * 1024 * 1024);

    // In the root: first what it has (before the bundle is there), then the
    // bundle unpacked, One Shot run from it, and Top 5 with the loader
    // tracing every process into ld/.
    const std::string choice = c_library == CLibrary::Bundle ? "bundle" : "auto";
    const std::string in_root = R"SH(set -e
export GPUSCHED_BUNDLE_LIBC=)SH" +
                                choice + R"SH(
dpkg-query -W -f='${Package}\n' > packages.txt
find / \( -path /tmp -o -path /proc -o -path /sys -o -path /dev \) -prune -o \
     \( -name 'libHalide*' -o -name 'libLLVM*' \) -print > halide-llvm-outside.txt
ls /usr/lib/x86_64-linux-gnu/libOpenCL.so > opencl-dev-name.txt 2>&1 || true
getconf GNU_LIBC_VERSION | awk '{ print $2 }' > machine-glibc.txt
tar xf gpusched-bundle.tar.xz
ls gpusched/lib > bundle-libs.txt
cat gpusched/lib/c-runtime/version > bundle-glibc.txt
machine_libstdcxx=$(ldconfig -p | awk '$1 == "libstdc++.so.6" && /x86-64/ { print $NF; exit }')
if grep -q -F "$(cat gpusched/lib/cxx-runtime/needs)" "$machine_libstdcxx"; then echo machine; else echo bundle; fi \
  > libstdcxx-expected.txt
gpusched/bin/gpusched oneshot gpusched/generators/demo_sharpen.generator -g demo_sharpen --gpu h100 \
  --samples 2 --beam-size 2 --passes 1 -j 2 -o oneshot --db oneshot/samples.sqlite --json > oneshot.json
mkdir ld
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld/trace gpusched/bin/gpusched tune \
  gpusched/generators/demo_sharpen.generator -g demo_sharpen --mode top5 --device opencl --gpu h100 \
  --samples 3 --top 2 --beam-size 2 --passes 1 -j 2 --min-time 0.01 --max-reps 30 --baselines li2018 \
  -o out --db out/samples.sqlite --json > top5.json
# The same bundle less its libHalide (hard links, no copy): the root has no
# other, so the generator cannot start and tune says which library is missing.
cp -al gpusched without-halide && rm without-halide/lib/libHalide*
set +e
without-halide/bin/gpusched tune gpusched/generators/demo_sharpen.generator -g demo_sharpen --mode top5 \
  --device opencl --gpu h100 -o out-without-halide --db out-without-halide.sqlite 2> without-halide.err
echo $? > without-halide.rc
)SH";
    // Making the root the first time costs minutes (debootstrap and apt).
    ProcessResult ran = run({GPUSCHED_TEST_SOURCE_DIR "/scripts/in-bare-root.sh", work, in_root},
                            std::chrono::minutes(25), {{"GPUSCHED_BARE_ROOT_RELEASE", release}});
    INFO("in-bare-root.sh: " << describe(ran));
    REQUIRE(ran.ok());
    // Where the time goes (ctest -V shows it): docs/bundle.md quotes it.
    std::cout << release << ": make-bundle.sh " << packed.wall_seconds << " s; in-bare-root.sh "
              << ran.wall_seconds << " s (the root "
              << (ran.err.find("made the bare root") != std::string::npos ? "made" : "cached") << ")\n";

    // The bundle's Halide and LLVM, by name: libHalide14.so.0 and
    // libLLVM-14.so.1 from Debian 12, libHalide19.so.0 and libLLVM.so.18.1
    // from Debian 13.
    std::string bundle_halide, bundle_llvm;
    for (const auto &name : lines_of(test::read_file(work + "/bundle-libs.txt"))) {
        if (name.rfind("libHalide", 0) == 0) bundle_halide = name;
        if (name.rfind("libLLVM", 0) == 0) bundle_llvm = name;
    }
    INFO("the bundle's libHalide: " << bundle_halide << "; its LLVM: " << bundle_llvm);
    REQUIRE_FALSE(bundle_halide.empty());
    REQUIRE_FALSE(bundle_llvm.empty());

    // The root is the machine the bundle is for: a C++ compiler and POCL,
    // no Halide, not the bundle's LLVM, and no libOpenCL.so development
    // name (which Halide's runtime asks for: the runners' preload must do
    // without it).
    const auto packages = lines_of(test::read_file(work + "/packages.txt"));
    const std::set<std::string> installed(packages.begin(), packages.end());
    CHECK(installed.count("g++"));
    CHECK(installed.count("pocl-opencl-icd"));
    for (const auto &p : packages) {
        INFO("package in the bare root: " << p);
        CHECK(p.find("halide") == std::string::npos);
    }
    for (const auto &path : lines_of(test::read_file(work + "/halide-llvm-outside.txt"))) {
        INFO("in the root before the bundle: " << path);
        CHECK_FALSE(name_starts(path, "libHalide"));
        CHECK(fs::path(path).filename() != bundle_llvm);
    }
    CHECK(test::read_file(work + "/opencl-dev-name.txt").find("No such file") != std::string::npos);

    // Which C library and libstdc++ every process of the bundle should run
    // on: the bundle's where the machine's is older (or where asked for).
    const std::string machine_glibc = lines_of(test::read_file(work + "/machine-glibc.txt")).at(0);
    const std::string bundle_glibc = lines_of(test::read_file(work + "/bundle-glibc.txt")).at(0);
    const auto minor = [](const std::string &v) { return std::stoi(v.substr(v.find('.') + 1)); };
    const bool bundle_libc = c_library == CLibrary::Bundle || minor(bundle_glibc) > minor(machine_glibc);
    const bool bundle_libstdcxx =
        lines_of(test::read_file(work + "/libstdcxx-expected.txt")).at(0) == "bundle";
    INFO("glibc: the machine's " << machine_glibc << ", the bundle's " << bundle_glibc
                                 << ", the bundle's in use: " << bundle_libc
                                 << "; the bundle's libstdc++ in use: " << bundle_libstdcxx);

    // One Shot: its pick validated on POCL and written out.
    const auto oneshot = nlohmann::json::parse(test::read_file(work + "/oneshot.json"), nullptr, false);
    REQUIRE_FALSE(oneshot.is_discarded());
    INFO(oneshot.dump(2).substr(0, 3000));
    const int best = oneshot["best_sample"];
    CHECK(oneshot["samples"][best]["validation"]["status"] == "passed");
    CHECK(fs::exists(work + "/oneshot/demo_sharpen.a"));
    CHECK(fs::exists(work + "/oneshot/demo_sharpen.schedule.h"));

    // What Top 5 reported: both samples and Li2018 measured on POCL with a
    // validated output.
    const auto report = nlohmann::json::parse(test::read_file(work + "/top5.json"), nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    INFO(report.dump(2).substr(0, 4000));
    const std::string device = report["device"];
    CHECK(device.rfind("pocl-", 0) == 0);
    REQUIRE(report["benchmarked"].size() == 2);
    for (const auto &e : report["benchmarked"]) {
        CHECK(e["measurement"]["outcome"] == "measured");
        CHECK(e["measurement"]["validation"] == "passed");
    }
    REQUIRE(report["baselines"].size() == 1);
    CHECK(report["baselines"][0]["source"] == "li2018");
    CHECK(report["baselines"][0]["measurement"]["outcome"] == "measured");
    CHECK(report["baselines"][0]["measurement"]["validation"] == "passed");
    CHECK(fs::exists(work + "/out/demo_sharpen.a"));

    // Without the bundle's libHalide nothing else in the root stands in:
    // one line naming the missing library, and a failure exit.
    const std::string without_halide = test::read_file(work + "/without-halide.err");
    INFO("tune without the bundle's libHalide: " << without_halide);
    CHECK(test::read_file(work + "/without-halide.rc") != "0\n");
    CHECK(without_halide.find("error: generator 'gpusched/generators/demo_sharpen.generator' cannot start, a "
                              "shared library it needs is missing: " +
                              bundle_halide) != std::string::npos);
    CHECK(std::count(without_halide.begin(), without_halide.end(), '\n') == 1);

    // The database the bundled gpusched wrote: the batch's three samples, the
    // two benchmarked ones with their device, repetitions and median.
    const int64_t run_id = report["run_id"];
    db::Database database = db::Database::open_existing(work + "/out/samples.sqlite");
    db::SampleStore store(database);
    const auto rows = store.samples_of_run(run_id);
    REQUIRE(rows.size() == 3);
    int measured = 0;
    for (const auto &s : rows) {
        if (s.benchmark.empty()) continue;
        ++measured;
        CHECK(s.benchmark == "measured");
        CHECK(s.validation == "passed");
        REQUIRE(s.device);
        CHECK(*s.device == device);
        REQUIRE(s.runtime_median_ms);
        CHECK(*s.runtime_median_ms > 0);
        REQUIRE(s.runtime_reps);
        CHECK(*s.runtime_reps >= 1);
    }
    CHECK(measured == 2);

    // The loader's word on every program of the run (gpusched, generators,
    // compilers, runners):
    // - a program that loaded libHalide loaded the bundle's, with the
    //   bundle's LLVM, on the chosen C library;
    // - on the bundle's C library, the machine's programs (the compiler,
    //   binutils) loaded nothing of the bundle, and the runners gpusched
    //   linked here ran on the bundle's too;
    // - any other LLVM is the machine's, loaded beside libpocl or by
    //   binutils' LTO plugin (the shared runtime goes into each sample's
    //   library with `ar`);
    // - libstdc++ is the machine's where it defines every version the
    //   bundle's does (bundle-launcher.sh), so POCL and the LTO plugin get
    //   the one they were built for, else the bundle's;
    // - the OpenCL runs went through the machine's ICD loader to POCL.
    const std::string bundle_dir = kBundleInRoot + "lib/";
    const auto from_bundle = [&](const std::string &lib) { return lib.rfind(kBundleInRoot, 0) == 0; };
    int images = 0, halide_images = 0, pocl_images = 0, libstdcxx_loads = 0, bundle_libc_runners = 0;
    for (const auto &entry : fs::directory_iterator(work + "/ld")) {
        for (const auto &image : program_images(test::read_file(entry.path()))) {
            ++images;
            const std::string libc = image.first("libc.so");
            INFO("program " << image.program << " in trace " << entry.path().filename() << " on " << libc);
            REQUIRE_FALSE(libc.empty());
            const bool halide = image.loaded("libHalide");
            const bool pocl = image.loaded("libpocl.so");
            const bool bfd_plugin =
                std::any_of(image.libs.begin(), image.libs.end(), [](const std::string &l) {
                    return l.find("/bfd-plugins/") != std::string::npos;
                });
            halide_images += halide;
            pocl_images += pocl;
            if (halide) CHECK(from_bundle(libc) == bundle_libc);
            if (!halide && from_bundle(libc)) ++bundle_libc_runners;
            for (const auto &lib : image.libs) {
                INFO("it loaded " << lib);
                if (bundle_libc && !from_bundle(libc)) CHECK_FALSE(from_bundle(lib));
                if (name_starts(lib, "libHalide")) {
                    CHECK(lib == bundle_dir + bundle_halide);
                } else if (name_starts(lib, "libLLVM")) {
                    if (halide)
                        CHECK(lib == bundle_dir + bundle_llvm);
                    else
                        CHECK((pocl || bfd_plugin));
                } else if (name_starts(lib, "libstdc++")) {
                    ++libstdcxx_loads;
                    if (!bundle_libc || from_bundle(libc)) CHECK(from_bundle(lib) == bundle_libstdcxx);
                }
            }
        }
    }
    INFO(images << " programs traced");
    CHECK(halide_images > 0);
    CHECK(pocl_images > 0);
    CHECK(libstdcxx_loads > 0);
    // The OpenCL probe, the validation runner and the benchmark harness.
    if (bundle_libc) CHECK(bundle_libc_runners >= 3);
}

} // namespace

TEST_CASE("the bundle runs One Shot and Top 5 on POCL in a bare Debian 12 root on its own dynamic loader and "
          "C library, its only Halide and LLVM the bundle's",
          "[bundle][bare-root]") {
    check_bundle_in_bare_root("bookworm", CLibrary::Bundle);
}

// Debian 13's POCL needs GLIBCXX_3.4.32; with a Debian 12 bundle's
// libstdc++ first in the library path its ICD did not load, and every
// OpenCL query failed with -1001.
TEST_CASE(
    "the bundle runs One Shot and Top 5 on POCL in a bare Debian 13 root, whose C library, libstdc++ and "
    "POCL are as new as the bundle's or newer",
    "[bundle][bare-root]") {
    check_bundle_in_bare_root("trixie", CLibrary::ChosenByLauncher);
}
