// The relocatable bundle (scripts/make-bundle.sh, docs/bundle.md) on a
// machine like a GPU node: a bare Debian root made by
// scripts/in-bare-root.sh, with glibc, g++, xz-utils and POCL but no
// Halide and no LLVM 14; once Debian 12 (the bundle's own release), once
// Debian 13, whose compiler, binutils and POCL are newer than the bundle's
// libraries, as a current GPU node's are. The test packs this build into the
// tarball, unpacks it in the root and runs Top 5 on POCL from it, every
// process of the run traced by the dynamic loader (LD_DEBUG=libs), then
// checks from outside: the root really lacks Halide and LLVM 14, every
// libHalide and libLLVM-14 a process loaded came from the bundle and every
// libstdc++ from the machine, the samples and the Li2018 baseline were
// measured and validated, and the database holds their times.

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

// The libraries one process initialized, from its LD_DEBUG=libs trace
// ("  PID:\tcalling init: /path/libX.so").
std::vector<std::string> libraries_loaded(const std::string &trace) {
    std::vector<std::string> libs;
    const std::string key = "calling init: ";
    for (const auto &line : lines_of(trace)) {
        const auto at = line.find(key);
        if (at != std::string::npos) libs.push_back(line.substr(at + key.size()));
    }
    return libs;
}

bool name_starts(const std::string &path, const std::string &prefix) {
    return fs::path(path).filename().string().rfind(prefix, 0) == 0;
}

// Packs this build, runs Top 5 from the bundle in a bare root of the Debian
// `release` (in-bare-root.sh's GPUSCHED_BARE_ROOT_RELEASE) and checks what
// the file's header says.
void check_top5_from_bundle_in_bare_root(const std::string &release) {
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
    // bundle unpacked and Top 5 run from it with the loader tracing every
    // process into ld/.
    const std::string in_root = R"(set -e
dpkg-query -W -f='${Package}\n' > packages.txt
find / \( -path /tmp -o -path /proc -o -path /sys -o -path /dev \) -prune -o \
     \( -name 'libHalide*' -o -name 'libLLVM-14*' -o -name 'libLLVM.so.14*' \) -print > halide-llvm14-outside.txt
ls /usr/lib/x86_64-linux-gnu/libOpenCL.so > opencl-dev-name.txt 2>&1 || true
tar xf gpusched-bundle.tar.xz
mkdir ld
LD_DEBUG=libs LD_DEBUG_OUTPUT=/tmp/ld/trace gpusched/bin/gpusched tune \
  gpusched/generators/demo_sharpen.generator -g demo_sharpen --mode top5 --device opencl --gpu h100 \
  --samples 3 --top 2 --beam-size 2 --passes 1 -j 2 --min-time 0.01 --max-reps 30 --baselines li2018 \
  -o out --db out/samples.sqlite --json > top5.json
# The same bundle less its libHalide (hard links, no copy): the root has no
# other, so the generator cannot start and tune says which library is missing.
cp -al gpusched without-halide && rm without-halide/lib/libHalide14.so.0
set +e
without-halide/bin/gpusched tune gpusched/generators/demo_sharpen.generator -g demo_sharpen --mode top5 \
  --device opencl --gpu h100 -o out-without-halide --db out-without-halide.sqlite 2> without-halide.err
echo $? > without-halide.rc
)";
    // Making the root the first time costs minutes (debootstrap and apt).
    ProcessResult ran = run({GPUSCHED_TEST_SOURCE_DIR "/scripts/in-bare-root.sh", work, in_root},
                            std::chrono::minutes(25), {{"GPUSCHED_BARE_ROOT_RELEASE", release}});
    INFO("in-bare-root.sh: " << describe(ran));
    REQUIRE(ran.ok());
    // Where the time goes (ctest -V shows it): docs/bundle.md quotes it.
    std::cout << release << ": make-bundle.sh " << packed.wall_seconds << " s; in-bare-root.sh "
              << ran.wall_seconds << " s (the root "
              << (ran.err.find("made the bare root") != std::string::npos ? "made" : "cached") << ")\n";

    // The root is the machine the bundle is for: a C++ compiler and POCL,
    // no Halide, no LLVM 14, and no libOpenCL.so development name (which
    // Halide's runtime asks for: the runners' preload must do without it).
    const auto packages = lines_of(test::read_file(work + "/packages.txt"));
    const std::set<std::string> installed(packages.begin(), packages.end());
    CHECK(installed.count("g++"));
    CHECK(installed.count("pocl-opencl-icd"));
    for (const auto &p : packages) {
        INFO("package in the bare root: " << p);
        CHECK(p.find("halide") == std::string::npos);
        CHECK(p.find("llvm-14") == std::string::npos);
        CHECK(p.find("llvm14") == std::string::npos);
    }
    CHECK(test::read_file(work + "/halide-llvm14-outside.txt").empty());
    CHECK(test::read_file(work + "/opencl-dev-name.txt").find("No such file") != std::string::npos);

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
                              "shared library it needs is missing: libHalide14.so.0") != std::string::npos);
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

    // The loader's word on every process of the run (gpusched, generators,
    // compilers, runners): libHalide and libLLVM-14 only ever from the
    // bundle; the one other LLVM is the machine's, loaded beside libpocl or
    // by binutils' LTO plugin (the shared runtime goes into each sample's
    // library with `ar`); libstdc++ always the machine's, which on both
    // releases is as new as the bundle's (bundle-launcher.sh), so POCL and
    // the LTO plugin get the one they were built for; and the OpenCL runs
    // went through the machine's ICD loader to POCL.
    int traces = 0, halide_loads = 0, llvm14_loads = 0, pocl_loads = 0, libstdcxx_loads = 0;
    for (const auto &entry : fs::directory_iterator(work + "/ld")) {
        ++traces;
        const auto libs = libraries_loaded(test::read_file(entry.path()));
        const bool has_pocl = std::any_of(libs.begin(), libs.end(),
                                          [](const std::string &l) { return name_starts(l, "libpocl.so"); });
        // binutils (`ar`, `ld`) load the machine's LTO plugin, LLVMgold,
        // which brings the machine's own LLVM (Debian's POCL pulls it in).
        const bool has_bfd_plugin = std::any_of(libs.begin(), libs.end(), [](const std::string &l) {
            return l.find("/bfd-plugins/") != std::string::npos;
        });
        pocl_loads += has_pocl;
        for (const auto &lib : libs) {
            INFO("process trace " << entry.path().filename() << " loaded " << lib);
            if (name_starts(lib, "libHalide")) {
                ++halide_loads;
                CHECK(lib.rfind(kBundleInRoot + "lib/", 0) == 0);
            } else if (name_starts(lib, "libLLVM-14") || name_starts(lib, "libLLVM.so.14")) {
                ++llvm14_loads;
                CHECK(lib.rfind(kBundleInRoot + "lib/", 0) == 0);
            } else if (name_starts(lib, "libLLVM")) {
                CHECK((has_pocl || has_bfd_plugin));
                CHECK(lib.rfind(kBundleInRoot, 0) != 0);
            } else if (name_starts(lib, "libstdc++")) {
                ++libstdcxx_loads;
                CHECK(lib.rfind(kBundleInRoot, 0) != 0);
            }
        }
    }
    INFO(traces << " process traces");
    CHECK(halide_loads > 0);
    CHECK(llvm14_loads > 0);
    CHECK(pocl_loads > 0);
    CHECK(libstdcxx_loads > 0);
}

} // namespace

TEST_CASE(
    "the bundle runs Top 5 on POCL in a bare Debian 12 root whose only Halide and LLVM 14 are the bundle's",
    "[bundle][bare-root]") {
    check_top5_from_bundle_in_bare_root("bookworm");
}

// Debian 13's POCL needs GLIBCXX_3.4.32; with the bundle's Debian 12
// libstdc++ first in the library path its ICD did not load, and every
// OpenCL query failed with -1001.
TEST_CASE(
    "the bundle runs Top 5 on POCL in a bare Debian 13 root, whose libstdc++ and POCL are newer than the "
    "bundle's",
    "[bundle][bare-root]") {
    check_top5_from_bundle_in_bare_root("trixie");
}
