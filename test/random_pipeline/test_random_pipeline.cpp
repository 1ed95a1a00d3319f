// Tests of the random pipeline generator (benchmarks/random_pipeline): it is run
// as a subprocess, exactly as the tuner runs generators, and its products are
// checked for determinism, variety across seeds, coverage of the stage catalogue
// (several outputs together with reductions in particular), compilation for the
// host CPU and, with the naive schedule, for CUDA (PTX accepted by ptxas), and
// correct execution: AOT host builds produce finite values in [0, 1], and the
// naive GPU schedule run on POCL (host-opencl) matches the CPU build.
//
// Generators run with size=small, and with schedule=root wherever the schedule is
// beside the point (descriptions, headers, the 50-seed compile): unscheduled deep
// pipelines inline everything and take minutes to lower. The whole file takes a
// few minutes on two cores.

#include "test/catch2_compat.h"
#include "tuner/generate/generator_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

struct ProcessResult {
    int exit_code = -1; // -1 when killed by a signal or not started
    int signal = 0;
    bool timed_out = false;
    std::string output; // stdout and stderr together
};

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool file_exists(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

// A fresh directory under TMPDIR (or /tmp), unique per object, removed with
// everything in it when the object goes out of scope.
class TempDir {
public:
    explicit TempDir(const std::string &tag) {
        const char *base = std::getenv("TMPDIR");
        std::string templ = std::string(base && *base ? base : "/tmp") + "/rp_test_" + tag + "_XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        const char *dir = ::mkdtemp(buf.data());
        REQUIRE(dir != nullptr);
        path = dir;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;

    std::string path;
};

// Runs argv (no shell) with stdout+stderr captured to a file; kills it after
// timeout_s.
ProcessResult run_process(const std::vector<std::string> &argv, int timeout_s = 300) {
    ProcessResult result;
    const TempDir log_dir("log");
    const std::string log = log_dir.path + "/output.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char *> cargv;
    for (const std::string &a : argv)
        cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    pid_t pid = 0;
    const int err = ::posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) {
        result.output = std::string("posix_spawn failed: ") + std::strerror(err);
        return result;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            result.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    result.output = read_file(log);
    return result;
}

std::string describe_result(const ProcessResult &r) {
    std::ostringstream s;
    s << "exit " << r.exit_code << ", signal " << r.signal << (r.timed_out ? ", timed out" : "") << "\n"
      << r.output.substr(0, 4000);
    return s.str();
}

// Runs the generator with -o dir and the given -e list and params.
ProcessResult run_generator(const std::string &dir, const std::string &emit, const std::string &target,
                            const std::vector<std::string> &params) {
    std::vector<std::string> argv{RP_GENERATOR, "-g", "random_pipeline", "-o", dir,
                                  "-e",         emit, "target=" + target};
    argv.insert(argv.end(), params.begin(), params.end());
    return run_process(argv);
}

std::vector<std::string> small_params(int seed, std::vector<std::string> extra = {}) {
    std::vector<std::string> p{"seed=" + std::to_string(seed), "size=small"};
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
}

// Number of output buffers in a generated header's function declaration.
int count_header_outputs(const std::string &header) {
    int n = 0;
    for (size_t pos = header.find("_output_"); pos != std::string::npos;
         pos = header.find("_output_", pos + 1)) {
        // Each output buffer appears once per declaration of the entry point
        // (the plain one); count only "halide_buffer_t *_output_N_buffer".
        if (pos >= 17 && header.compare(pos - 17, 17, "halide_buffer_t *") == 0) n++;
    }
    return n;
}

// Everything after "seed=" up to the end of line, to ignore the seed itself
// when comparing descriptions of different seeds.
std::string strip_first_line(const std::string &text) {
    const size_t nl = text.find('\n');
    return nl == std::string::npos ? std::string() : text.substr(nl + 1);
}

std::vector<std::string> split_lines(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// All NUL-terminated PTX modules embedded in a static library.
std::vector<std::string> extract_ptx(const std::string &archive) {
    static const std::string kMarker = "//\n// Generated by LLVM NVPTX";
    std::vector<std::string> modules;
    for (size_t pos = archive.find(kMarker); pos != std::string::npos; pos = archive.find(kMarker, pos + 1)) {
        const size_t end = archive.find('\0', pos);
        if (end == std::string::npos) break;
        modules.push_back(archive.substr(pos, end - pos));
        pos = end;
    }
    return modules;
}

struct OutputImage {
    int width = 0, height = 0, channels = 0;
    std::vector<float> values;
};

// Reads rp_runner's output file (see rp_runner.cpp for the format).
std::vector<OutputImage> read_outputs(const std::string &path) {
    const std::string data = read_file(path);
    std::vector<OutputImage> images;
    size_t pos = 0;
    while (pos + 12 <= data.size()) {
        OutputImage img;
        int32_t dims[3];
        std::memcpy(dims, data.data() + pos, 12);
        pos += 12;
        img.width = dims[0], img.height = dims[1], img.channels = dims[2];
        const size_t count = (size_t)img.width * img.height * img.channels;
        REQUIRE(pos + count * sizeof(float) <= data.size());
        img.values.resize(count);
        std::memcpy(img.values.data(), data.data() + pos, count * sizeof(float));
        pos += count * sizeof(float);
        images.push_back(std::move(img));
    }
    REQUIRE(pos == data.size());
    return images;
}

std::vector<int> run_seeds() {
    std::vector<int> seeds;
    std::istringstream in(RP_RUN_SEEDS);
    for (std::string item; std::getline(in, item, ',');)
        seeds.push_back(std::stoi(item));
    return seeds;
}

// The params the runner libraries were built with (test/random_pipeline/CMakeLists.txt).
std::vector<std::string> runner_params(int seed) {
    return small_params(seed, {"num_outputs=0", "max_stages=8"});
}

constexpr int kRunWidth = 67; // odd sizes exercise tails of 16x16 GPU tiles
constexpr int kRunHeight = 45;

} // namespace

TEST_CASE("the same seed and params give a byte-identical pipeline", "[random_pipeline]") {
    const std::vector<std::string> params =
        small_params(12345, {"num_outputs=0", "max_stages=12", "describe=true", "schedule=root"});
    // Both runs write into the same directory: the header guard names the path.
    const TempDir dir_tmp("same");
    const std::string &dir = dir_tmp.path;
    const ProcessResult ra = run_generator(dir, "stmt,h", GPUSCHED_HOST_TARGET, params);
    INFO(describe_result(ra));
    REQUIRE(ra.exit_code == 0);
    const std::string stmt_a = read_file(dir + "/random_pipeline.stmt");
    const std::string header_a = read_file(dir + "/random_pipeline.h");
    REQUIRE(stmt_a.size() > 1000);
    REQUIRE(::unlink((dir + "/random_pipeline.stmt").c_str()) == 0);
    const ProcessResult rb = run_generator(dir, "stmt,h", GPUSCHED_HOST_TARGET, params);
    REQUIRE(rb.exit_code == 0);
    CHECK(stmt_a == read_file(dir + "/random_pipeline.stmt"));
    CHECK(header_a == read_file(dir + "/random_pipeline.h"));
    // The description (stderr) is part of the contract too: the tuner logs it.
    CHECK(ra.output == rb.output);
    CHECK(ra.output.find("random_pipeline seed=12345") != std::string::npos);
}

TEST_CASE("different seeds give different pipelines", "[random_pipeline]") {
    std::set<std::string> structures;
    const int kSeeds = 10;
    for (int seed = 1; seed <= kSeeds; seed++) {
        const TempDir dir_tmp("variety");
        const std::string &dir = dir_tmp.path;
        const ProcessResult r = run_generator(dir, "h", GPUSCHED_HOST_TARGET,
                                              small_params(seed, {"describe=true", "schedule=root"}));
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        structures.insert(strip_first_line(r.output));
    }
    CHECK(structures.size() == (size_t)kSeeds);

    // And the lowered code differs, not only the description.
    const TempDir t1("variety_stmt1"), t2("variety_stmt2");
    const std::string &d1 = t1.path, &d2 = t2.path;
    REQUIRE(
        run_generator(d1, "stmt", GPUSCHED_HOST_TARGET, small_params(1, {"max_stages=4", "schedule=root"}))
            .exit_code == 0);
    REQUIRE(
        run_generator(d2, "stmt", GPUSCHED_HOST_TARGET, small_params(2, {"max_stages=4", "schedule=root"}))
            .exit_code == 0);
    CHECK(read_file(d1 + "/random_pipeline.stmt") != read_file(d2 + "/random_pipeline.stmt"));
}

TEST_CASE("the family covers every stage kind, several outputs and reductions together",
          "[random_pipeline]") {
    static const char *kKinds[] = {"pointwise", "binary",      "cast",       "stencil3x3", "stencil5x5",
                                   "separable", "downsample",  "upsample",   "transpose",  "window_reduce",
                                   "histogram", "channel_sum", "channel_mix"};
    std::map<std::string, int> kind_count;
    std::map<int, int> output_count_hist;
    int multi_output_with_reduction = 0;
    int two_input = 0;
    for (int seed = 0; seed < 40; seed++) {
        const TempDir dir_tmp("family");
        const std::string &dir = dir_tmp.path;
        const ProcessResult r =
            run_generator(dir, "h", GPUSCHED_HOST_TARGET,
                          small_params(seed, {"num_outputs=0", "describe=true", "schedule=root"}));
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        const std::string header = read_file(dir + "/random_pipeline.h");
        const int outputs = count_header_outputs(header);
        // The description and the compiled signature must agree.
        REQUIRE(r.output.find("outputs=" + std::to_string(outputs) + " ") != std::string::npos);
        REQUIRE(outputs >= 1);
        REQUIRE(outputs <= 3);
        output_count_hist[outputs]++;
        if (header.find("_input_1_buffer") != std::string::npos) two_input++;
        int reduction_outputs = 0;
        for (const std::string &line : split_lines(r.output)) {
            for (const char *kind : kKinds) {
                if (line.find(std::string(" ") + kind + "(") != std::string::npos) kind_count[kind]++;
            }
            if (line.find("output_") != std::string::npos &&
                line.find("(reduction upstream)") != std::string::npos) {
                reduction_outputs++;
            }
        }
        if (outputs >= 2 && reduction_outputs >= 1) multi_output_with_reduction++;
    }
    for (const char *kind : kKinds) {
        INFO("stage kind " << kind);
        CHECK(kind_count[kind] > 0);
    }
    CHECK(output_count_hist[1] > 0);
    CHECK(output_count_hist[2] > 0);
    CHECK(output_count_hist[3] > 0);
    CHECK(two_input > 0);
    CHECK(two_input < 40);
    // Halide issue 8000: several outputs plus reductions is where autoschedulers break.
    CHECK(multi_output_with_reduction >= 3);
}

TEST_CASE(
    "gathers=true adds gathers at clamped data-dependent indices, and without it a seed keeps its pipeline",
    "[random_pipeline]") {
    // Seed 24 as the generator drew it before the gather kind existed.
    const std::string before = "  in0 input_0 mirror_interior: float32 [0, 1] est 128x96\n"
                               "  s0 histogram(in0) 128 bins: float32 [0, 1] est 128x96\n"
                               "  s1 histogram(s0) 256 bins: float32 [0, 1] est 128x96\n"
                               "  s2 cast(s1) float32->uint8: uint8 [0, 255] est 128x96\n"
                               "  s3 separable(s2) 5 taps: uint8 [0, 255] est 128x96\n"
                               "  output_0 <- s3 (reduction upstream) est 128x96x3\n";
    {
        const TempDir dir("gathers_off");
        const ProcessResult r =
            run_generator(dir.path, "stmt", GPUSCHED_HOST_TARGET,
                          small_params(24, {"num_outputs=0", "max_stages=8", "describe=true"}));
        REQUIRE(r.exit_code == 0);
        CHECK(strip_first_line(r.output) == before);
    }
    int lookups = 0, displacements = 0;
    // Lowered only (-e stmt): compiling 20 pipelines to machine code would
    // take minutes; lowering is where a read Halide cannot bound fails.
    for (int seed = 0; seed < 20; seed++) {
        const TempDir dir("gathers_on");
        const ProcessResult r = run_generator(
            dir.path, "stmt", GPUSCHED_HOST_TARGET,
            small_params(seed, {"num_outputs=0", "max_stages=8", "describe=true", "gathers=true"}));
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        for (const std::string &line : split_lines(r.output)) {
            if (line.find(" gather(") == std::string::npos) continue;
            lookups += line.find(") lookup along ") != std::string::npos ? 1 : 0;
            displacements += line.find(") displace ") != std::string::npos ? 1 : 0;
        }
    }
    CHECK(lookups > 0);
    CHECK(displacements > 0);
}

TEST_CASE("schedule=naive on a target without a GPU is a clear error", "[random_pipeline]") {
    const TempDir dir_tmp("naive_cpu");
    const std::string &dir = dir_tmp.path;
    const ProcessResult r =
        run_generator(dir, "h", GPUSCHED_HOST_TARGET, small_params(1, {"schedule=naive"}));
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("needs a target with a GPU feature") != std::string::npos);
}

TEST_CASE("50 seeds compile for the host CPU", "[random_pipeline][slow]") {
    // schedule=root: with no schedule at all every stage inlines into the
    // outputs and compile time explodes with depth (docs/random-pipelines.md);
    // no_runtime: the runtime is the same for every seed and would dominate.
    for (int seed = 0; seed < 50; seed++) {
        const TempDir dir_tmp("host");
        const std::string &dir = dir_tmp.path;
        const ProcessResult r =
            run_generator(dir, "static_library,h", GPUSCHED_HOST_TARGET "-no_runtime",
                          small_params(seed, {"num_outputs=0", "max_stages=8", "schedule=root"}));
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        struct stat st;
        REQUIRE(::stat((dir + "/random_pipeline.a").c_str(), &st) == 0);
        CHECK(st.st_size > 1000);
    }
}

TEST_CASE("gpusched_root builds seed 25, whose all-inline lowering took more than 24 GiB, within 1 GiB",
          "[random_pipeline][reference]") {
    // The CPU reference of validation falls back to gpusched_root (every Func
    // at root) when Mullapudi2016 cannot schedule a pipeline: unscheduled,
    // this seed's lowering ran the fuzz machine out of memory.
    const TempDir dir_tmp("root");
    const std::string &dir = dir_tmp.path;
    std::string command =
        "ulimit -v 1048576; exec '" RP_GENERATOR "' -g random_pipeline -o '" + dir +
        "' -e static_library,h,schedule -p '" RP_PLUGIN "' target=" + std::string(GPUSCHED_HOST_TARGET) +
        "-no_runtime";
    for (const std::string &a : gpusched::autoscheduler_args("gpusched_root"))
        command += " " + a;
    for (const std::string &p : small_params(25, {"num_outputs=0", "scans=true", "pyramids=true"}))
        command += " " + p;
    const ProcessResult r = run_process({"/bin/sh", "-c", command}, 120);
    INFO(describe_result(r));
    REQUIRE(r.exit_code == 0);
    const std::string schedule = read_file(dir + "/random_pipeline.schedule.h");
    CHECK(schedule.find("generated by gpusched_root") != std::string::npos);
    // Every Func of the pipeline, each at root and nothing else: one
    // `::Halide::Func NAME = pipeline.get_func(i);` and one `NAME.compute_root();`.
    int funcs = 0, at_root = 0;
    std::set<std::string> handles;
    for (const std::string &line : split_lines(schedule)) {
        const size_t bind = line.find(" = pipeline.get_func(");
        if (bind != std::string::npos) {
            ++funcs;
            handles.insert(line.substr(line.rfind(' ', bind - 1) + 1, bind - line.rfind(' ', bind - 1) - 1));
        } else if (line.find(".compute_root();") != std::string::npos) {
            ++at_root;
            CHECK(handles.count(line.substr(line.find_first_not_of(' '),
                                            line.find(".compute_root();") - line.find_first_not_of(' '))) ==
                  1);
        }
    }
    CHECK(funcs > 20);
    CHECK(at_root == funcs);
}

// Seed 1060 (found by the fuzz campaign of issue 29) sums a channel over an
// RDom sized by the input, max(width / 4, 16) columns, and the search split
// that sum: the intermediate's dimension has the RVar's extent. Computed at
// a kernel's block level, Halide sized its threads and shared memory at run
// time, and the launch check refused the schedule (a search bug, exit 1).
// A Func read over such an RVar is now sized by its estimate and fixed with
// bound_extent, as Funcs whose region moves with the tile are.
TEST_CASE("a reduction split over an input-sized domain gives kernels of constant size (seed 1060)",
          "[random_pipeline][reduction_split]") {
    const TempDir dir_tmp("split1060");
    const std::string &dir = dir_tmp.path;
    // The search's seed and beam of the campaign (32 x 5); the launch check on.
    {
        std::ofstream cfg(dir + "/config.json");
        cfg << R"({"seed": 1060000, "check_launches": true})";
    }
    std::string command = "GPUSCHED_CONFIG='" + dir +
                          "/config.json' exec '" RP_GENERATOR "' -g random_pipeline -o '" + dir +
                          "' -e schedule -p '" RP_PLUGIN "' target=x86-64-linux-avx2-cuda-cuda_capability_86";
    for (const std::string &a : gpusched::autoscheduler_args("gpusched"))
        command += " " + a;
    for (const std::string &p : small_params(1060, {"num_outputs=0"}))
        command += " " + p;
    const ProcessResult r = run_process({"/bin/sh", "-c", command}, 300);
    INFO(describe_result(r));
    REQUIRE(r.exit_code == 0);
    const std::string schedule = read_file(dir + "/random_pipeline.schedule.h");
    INFO(schedule);
    REQUIRE(schedule.find("s5_channel_sum_total_intm = s5_channel_sum_total.update(0)") != std::string::npos);
    // Below root, the intermediate's size is fixed in every dimension.
    if (schedule.find("s5_channel_sum_total_intm.compute_at(") != std::string::npos) {
        CHECK(schedule.find("s5_channel_sum_total_intm.bound_extent(v1_rf0_s5_channel_sum_total, ") !=
              std::string::npos);
    }
}

// Seeds 1141 and 1500 (issue 29's campaign) read a Func inside one kernel
// along two paths that move apart as the block moves: directly, and through
// a transpose (1500: a channel mix read by a pointwise stage, and by a
// stencil that a transpose reads). The union of the two reads grows with the
// block's distance from the diagonal, so no fixed size holds for every
// block; the search placed the Func at the kernel's block level anyway
// (its check moved only the direct readers' tiles, and never along x), and
// the launch check refused the schedule (exit 1). The check now moves the
// kernel's tile along each dimension and recomputes the chain of Funcs
// inside the kernel.
TEST_CASE("a Func whose per-block region grows with the block's position through a transpose stays out of "
          "the kernel (seeds 1141 and 1500)",
          "[random_pipeline][launch]") {
    for (int seed : {1141, 1500}) {
        const TempDir dir_tmp("transpose" + std::to_string(seed));
        const std::string &dir = dir_tmp.path;
        // The campaign's search seed and beam (32 x 5), the launch check on.
        {
            std::ofstream cfg(dir + "/config.json");
            cfg << R"({"seed": )" << seed * 1000 << R"(, "check_launches": true})";
        }
        std::string command =
            "GPUSCHED_CONFIG='" + dir + "/config.json' exec '" RP_GENERATOR "' -g random_pipeline -o '" +
            dir + "' -e schedule -p '" RP_PLUGIN "' target=x86-64-linux-avx2-cuda-cuda_capability_86";
        for (const std::string &a : gpusched::autoscheduler_args("gpusched"))
            command += " " + a;
        for (const std::string &p : small_params(seed, {"num_outputs=0"}))
            command += " " + p;
        const ProcessResult r = run_process({"/bin/sh", "-c", command}, 300);
        INFO("seed " << seed << ": " << describe_result(r));
        CHECK(r.exit_code == 0);
        CHECK(file_exists(dir + "/random_pipeline.schedule.h"));
    }
}

TEST_CASE("20 seeds with the naive schedule compile to PTX that ptxas accepts for sm_90",
          "[random_pipeline][slow]") {
    REQUIRE(file_exists(RP_PTXAS));
    for (int seed = 100; seed < 120; seed++) {
        const TempDir dir_tmp("cuda");
        const std::string &dir = dir_tmp.path;
        const ProcessResult r =
            run_generator(dir, "static_library,h", "host-cuda-cuda_capability_86-no_runtime",
                          small_params(seed, {"num_outputs=0", "max_stages=8", "schedule=naive"}));
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        const std::vector<std::string> modules = extract_ptx(read_file(dir + "/random_pipeline.a"));
        REQUIRE(!modules.empty());
        for (size_t m = 0; m < modules.size(); m++) {
            // Every output is compute_root + gpu_tile, so there is at least one kernel.
            CHECK(modules[m].find(".entry") != std::string::npos);
            const std::string ptx = dir + "/module" + std::to_string(m) + ".ptx";
            std::ofstream(ptx, std::ios::binary) << modules[m];
            const ProcessResult pr =
                run_process({RP_PTXAS, "-arch=sm_90", ptx, "-o", dir + "/module.cubin"}, 120);
            INFO("ptxas: " << describe_result(pr));
            CHECK(pr.exit_code == 0);
        }
    }
}

TEST_CASE("AOT host builds run and produce finite values between 0 and 1", "[random_pipeline]") {
    for (int seed : run_seeds()) {
        const TempDir dir_tmp("run_cpu");
        const std::string &dir = dir_tmp.path;
        const std::string out = dir + "/cpu.bin";
        const ProcessResult r = run_process({RP_RUNNER_CPU, std::to_string(seed), std::to_string(kRunWidth),
                                             std::to_string(kRunHeight), out});
        INFO("seed " << seed << ": " << describe_result(r));
        REQUIRE(r.exit_code == 0);
        const std::vector<OutputImage> images = read_outputs(out);

        // As many outputs as the generator declares for these params.
        const TempDir gdir_tmp("run_cpu_h");
        const std::string &gdir = gdir_tmp.path;
        REQUIRE(run_generator(gdir, "h", GPUSCHED_HOST_TARGET, runner_params(seed)).exit_code == 0);
        REQUIRE((int)images.size() == count_header_outputs(read_file(gdir + "/random_pipeline.h")));

        bool any_varying = false;
        for (const OutputImage &img : images) {
            REQUIRE(img.width == kRunWidth);
            REQUIRE(img.height == kRunHeight);
            REQUIRE(img.channels == 3);
            float lo = img.values[0], hi = img.values[0];
            size_t bad = 0;
            for (float v : img.values) {
                // Outputs map their producer's static range onto [0, 1]; a value
                // outside means the range tracking (or the code) is wrong.
                if (!std::isfinite(v) || v < -1e-4f || v > 1.0f + 1e-4f) bad++;
                lo = std::min(lo, v), hi = std::max(hi, v);
            }
            INFO("output range [" << lo << ", " << hi << "]");
            CHECK(bad == 0);
            if (hi - lo > 1e-3f) any_varying = true;
        }
        // A pipeline that collapsed to a constant would pass the range check vacuously.
        CHECK(any_varying);
    }
}

TEST_CASE("naive GPU schedules run on POCL (host-opencl) and match the CPU build",
          "[random_pipeline][opencl]") {
    for (int seed : run_seeds()) {
        const TempDir dir_tmp("run_ocl");
        const std::string &dir = dir_tmp.path;
        const std::vector<std::string> size{std::to_string(kRunWidth), std::to_string(kRunHeight)};
        const ProcessResult rc =
            run_process({RP_RUNNER_CPU, std::to_string(seed), size[0], size[1], dir + "/cpu.bin"});
        const ProcessResult ro =
            run_process({RP_RUNNER_OCL, std::to_string(seed), size[0], size[1], dir + "/ocl.bin"});
        INFO("seed " << seed << "\ncpu: " << describe_result(rc) << "\nopencl: " << describe_result(ro));
        REQUIRE(rc.exit_code == 0);
        REQUIRE(ro.exit_code == 0);
        const std::vector<OutputImage> cpu = read_outputs(dir + "/cpu.bin");
        const std::vector<OutputImage> ocl = read_outputs(dir + "/ocl.bin");
        REQUIRE(cpu.size() == ocl.size());
        for (size_t i = 0; i < cpu.size(); i++) {
            REQUIRE(cpu[i].values.size() == ocl[i].values.size());
            // Float rounding may differ between the OpenCL compiler and the CPU
            // build, and can move a value across a histogram bin or a quantisation
            // step; such flips are rare. A wrong schedule differs almost everywhere.
            size_t mismatches = 0;
            double max_diff = 0;
            for (size_t k = 0; k < cpu[i].values.size(); k++) {
                const double d = std::fabs((double)cpu[i].values[k] - (double)ocl[i].values[k]);
                max_diff = std::max(max_diff, d);
                if (!(d <= 1e-3)) mismatches++;
            }
            INFO("output " << i << ": " << mismatches << " of " << cpu[i].values.size()
                           << " values differ by more than 1e-3, max difference " << max_diff);
            CHECK(mismatches * 1000 <= cpu[i].values.size());
        }
    }
}
