// Output validation: the OpenCL build of a schedule run on POCL against a CPU
// build, with real generators, real linking and real runner processes.

#include <cmath>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/measure/validation/output_file.h"
#include "tuner/measure/validation/pocl_validation.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

ValidationRequest request(const test::TempDir &dir, const std::string &name, const std::string &source) {
    ValidationRequest r;
    r.generator_path = DRIVER_TEST_GENERATORS;
    r.generator_name = name;
    r.source = *find_schedule_source(source);
    r.work_dir = dir / "validate";
    r.timeout = std::chrono::seconds(300);
    return r;
}

void write_output(const std::string &path, int code, int bits, std::vector<int32_t> extents, const void *data,
                  std::size_t bytes) {
    std::string s("GPSO", 4);
    int32_t header[4] = {code, bits, 1, static_cast<int32_t>(extents.size())};
    s.append(reinterpret_cast<const char *>(header), sizeof header);
    s.append(reinterpret_cast<const char *>(extents.data()), extents.size() * sizeof(int32_t));
    s.append(static_cast<const char *>(data), bytes);
    test::write_file(path, s);
}

// Rows of a table; 0 when the database file was never created.
int64_t rows_in(const std::string &db_path, const std::string &table) {
    if (!fs::exists(db_path)) return 0;
    sqlite3 *raw = nullptr;
    sqlite3_open_v2(db_path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *st = nullptr;
    int64_t n = -1; // the table does not exist, or the file is no database
    if (sqlite3_prepare_v2(raw, ("SELECT count(*) FROM " + table).c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return n;
}

} // namespace

TEST_CASE("a correct GPU schedule validates on POCL against the CPU build", "[validation]") {
    test::TempDir dir;
    auto r = validate_schedule_on_pocl(request(dir, "tiny_stencil", "naive"));
    INFO(r.detail);
    CHECK(r.status == ValidationStatus::Passed);
    REQUIRE(r.outputs.size() == 1);
    CHECK(r.outputs[0].first == "output");
    CHECK(r.outputs[0].second.elements == 256 * 128);
}

TEST_CASE("a 1-D GPU output is validated (the case RunGen cannot save)", "[validation]") {
    test::TempDir dir;
    auto r = validate_schedule_on_pocl(request(dir, "row_sums", "naive"));
    INFO(r.detail);
    CHECK(r.status == ValidationStatus::Passed);
    REQUIRE(r.outputs.size() == 1);
    CHECK(r.outputs[0].second.elements == 256);
}

TEST_CASE("a GPU build that computes something else fails validation, saying where", "[validation]") {
    test::TempDir dir;
    auto r = validate_schedule_on_pocl(request(dir, "wrong_on_gpu", "naive"));
    INFO(r.detail);
    CHECK(r.status == ValidationStatus::Failed);
    CHECK(r.detail.find("2048 of 2048 values differ") != std::string::npos);
    // Its device build computes the same something else: no excuse for it.
    CHECK(r.detail.find("the device's own build differs from the CPU build too") != std::string::npos);
}

TEST_CASE("oneshot never keeps a schedule that changes the output", "[validation][oneshot]") {
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "wrong_on_gpu", "--autoscheduler",
                            "naive", "-o", dir / "out", "--db", dir / "db.sqlite"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("changed the pipeline's output") != std::string::npos);
    // The sample was built and validated in its own directory...
    CHECK(fs::exists(dir / "out/samples/0/wrong_on_gpu.a"));
    // ...and nothing of it was kept: no file at the top of the output
    // directory, no row in the database.
    for (const auto &entry : fs::directory_iterator(dir / "out")) {
        INFO("kept: " << entry.path());
        CHECK(entry.path().filename().string().rfind("wrong_on_gpu", 0) != 0);
    }
    for (const char *table : {"pipelines", "runs", "samples", "kernels"}) {
        INFO("table " << table);
        CHECK(rows_in(dir / "db.sqlite", table) == 0);
    }
}

TEST_CASE("One Shot stores a transposed intermediate the way its reader walks it, and the schedule validates "
          "on POCL",
          "[validation][oneshot][layout]") {
    // rotated_stack's rot is read turned (out(x, y) reads rot(y, x)): stored
    // as defined, either its writes or out's reads take a sector per lane.
    test::TempDir dir;
    ProcessResult r = test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "rotated_stack",
                                          "--samples", "2", "-o", dir / "out", "--db", dir / "db.sqlite"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Output validation (OpenCL build on POCL vs a CPU build): passed") != std::string::npos);
    const nlohmann::json record =
        nlohmann::json::parse(test::read_file(dir / "out/rotated_stack.gpusched.json"));
    std::string rot_innermost;
    for (const nlohmann::json &d : record.at("decisions"))
        if (d.at("func") == "rot" && d.contains("storage_innermost")) rot_innermost = d["storage_innermost"];
    CHECK(rot_innermost == "y");
    CHECK(test::read_file(dir / "out/rotated_stack.schedule.h").find("rot.reorder_storage(") !=
          std::string::npos);
}

TEST_CASE("a shared tile padded against bank conflicts and one stored turned compute the same output on POCL",
          "[validation][layout]") {
    // rotated_stack's rot in out's kernel, in shared memory (out's block 16 x
    // 8, rot's tile 8 x 18): once with its dimension 0 padded (align_storage
    // to 9), once stored y innermost, each replayed through the plugin and
    // run on POCL.
    auto inline_func = [](const char *name) {
        return nlohmann::json{
            {"func", name}, {"location", "inline"}, {"host", nullptr}, {"stages", nlohmann::json::array()}};
    };
    for (const char *variant : {"pad_shared", "storage_innermost"}) {
        INFO(variant);
        test::TempDir dir;
        nlohmann::json rot = {
            {"func", "rot"},
            {"location", "block"},
            {"host", "output"},
            {"stages",
             {{{"serial", {1, 1}}, {"thread", {1, 1}}}, {{"serial", {1, 1, 1}}, {"thread", {1, 1, 1}}}}}};
        if (std::string(variant) == "pad_shared")
            rot["pad_shared"] = true;
        else
            rot["storage_innermost"] = "y";
        const nlohmann::json record = {{"format", "gpusched-search-record"},
                                       {"version", 1},
                                       {"decisions",
                                        {{{"func", "output"},
                                          {"location", "root"},
                                          {"host", nullptr},
                                          {"stages", {{{"serial", {1, 1}}, {"thread", {16, 8}}}}}},
                                         rot,
                                         inline_func("repeat_edge"),
                                         inline_func("lambda_0"),
                                         inline_func("input_im")}}};
        test::write_file(dir / "record.json", record.dump());
        ValidationRequest v = request(dir, "rotated_stack", "gpusched");
        v.replay_record = dir / "record.json";
        const ValidationReport report = validate_schedule_on_pocl(v);
        INFO(report.detail);
        CHECK(report.status == ValidationStatus::Passed);
    }
}

TEST_CASE(
    "a bilateral grid written as Halide's example writes it is scheduled by gpusched and validates on POCL",
    "[validation][oneshot][estimates]") {
    // The slice's bin index is bounded only by a clamp of the value and
    // r_sigma's estimate, the grid's z extent also by Func estimates.
    test::TempDir dir;
    ProcessResult r =
        test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "estimated_grid", "width=512",
                            "height=384", "--samples", "2", "-o", dir / "out", "--db", dir / "db.sqlite"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Output validation (OpenCL build on POCL vs a CPU build): passed") != std::string::npos);
}

TEST_CASE("a schedule that splits a float sum across threads is validated against a reference split the same "
          "way, bit for bit",
          "[validation][oneshot][reduction_split]") {
    test::TempDir dir;
    // Without atomic combining: partials added atomically arrive in the
    // order the threads run, which no reference can repeat bit for bit (it
    // is validated within the float tolerance instead).
    test::write_file(dir / "serial-combine.json", R"({"atomic_reductions": false})");
    ProcessResult r = test::run_gpusched({"oneshot", DRIVER_TEST_GENERATORS, "-g", "float_total", "--samples",
                                          "1", "-o", dir / "out", "--db", dir / "db.sqlite",
                                          "--search-config", dir / "serial-combine.json"});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const nlohmann::json record =
        nlohmann::json::parse(test::read_file(dir / "out/float_total.gpusched.json"));
    REQUIRE(record.contains("reduction_splits"));
    REQUIRE(!record["reduction_splits"].empty()); // the search split the sum
    // The chosen schedule, validated again: a reference summed serially would
    // differ in the last bits of a million-term float sum; one that performs
    // the record's splits sums in the same order, and agrees exactly.
    ValidationRequest v = request(dir, "float_total", "gpusched");
    v.plugin_config = {
        {"atomic_reductions", false}}; // otherwise the defaults: the h100 profile the search used
    v.replay_record = dir / "out/float_total.gpusched.json";
    const ValidationReport report = validate_schedule_on_pocl(v);
    INFO(report.detail);
    REQUIRE(report.status == ValidationStatus::Passed);
    REQUIRE(report.outputs.size() == 1);
    CHECK(report.outputs[0].second.elements == 1);
    CHECK(report.outputs[0].second.max_abs_error == 0);
}

TEST_CASE("a float sum split by a foreign schedule fails against the serial reference and passes against the "
          "one summed in blocks",
          "[validation][reduction_split]") {
    test::TempDir dir;
    ValidationRequest v = request(dir, "float_total", "manual");
    v.generator_params = {{"size", "4096"}};
    const ValidationReport report = validate_schedule_on_pocl(v);
    INFO(report.detail);
    REQUIRE(report.status == ValidationStatus::Passed);
    // 16.7 million squares: the serial float sum is 2% low, so the split
    // schedule disagrees with it...
    CHECK(report.detail.find("the serial one: 1 of 1 values differ") != std::string::npos);
    // ...and agrees with the second reference, which the plugin built by
    // splitting the one float reduction into 4096 partials.
    CHECK(report.detail.find("with the reference whose float reductions sum in blocks") != std::string::npos);
    const fs::path reference = fs::path(v.work_dir) / "reference";
    CHECK(fs::exists(reference / kReorderedReferenceDir / "output.raw"));
    CHECK(test::read_file(reference / "reordered.txt").find("\"partials\":4096") != std::string::npos);
}

TEST_CASE(
    "a float sum of at most 8192 terms gets no second reference and a foreign split of it passes against "
    "the serial one",
    "[validation][reduction_split]") {
    test::TempDir dir;
    // 64 x 64 = 4096 squares: any two orders agree within the tolerance, so
    // the expert's split sum passes against the serial reference alone.
    ValidationRequest v = request(dir, "float_total", "manual");
    v.generator_params = {{"size", "64"}};
    const ValidationReport report = validate_schedule_on_pocl(v);
    INFO(report.detail);
    REQUIRE(report.status == ValidationStatus::Passed);
    CHECK(report.detail.find("sum in blocks") == std::string::npos);
    const fs::path reference = fs::path(v.work_dir) / "reference";
    CHECK_FALSE(fs::exists(reference / kReorderedReferenceDir));
    CHECK(test::read_file(reference / "reordered.txt").find("no long float reduction") != std::string::npos);
    // 91 x 91 = 8281 squares, just past the bound: the second reference is built.
    test::TempDir longer;
    ValidationRequest w = request(longer, "float_total", "naive");
    w.generator_params = {{"size", "91"}};
    const ReferenceOutputs ref = reference_outputs(w);
    INFO(ref.failure);
    REQUIRE(ref.ok());
    CHECK(fs::exists(fs::path(ref.dir) / kReorderedReferenceDir / "output.raw"));
}

TEST_CASE("a pipeline without a long float reduction gets no second reference", "[validation]") {
    test::TempDir dir;
    ValidationRequest v = request(dir, "tiny_stencil", "naive");
    const ValidationReport report = validate_schedule_on_pocl(v);
    INFO(report.detail);
    REQUIRE(report.status == ValidationStatus::Passed);
    const fs::path reference = fs::path(v.work_dir) / "reference";
    CHECK_FALSE(fs::exists(reference / kReorderedReferenceDir));
    CHECK(test::read_file(reference / "reordered.txt").find("no long float reduction") != std::string::npos);
}

TEST_CASE("an output that agrees with neither reference fails and the detail gives both comparisons",
          "[validation]") {
    test::TempDir dir;
    fs::create_directories(fs::path(dir / "ref") / kReorderedReferenceDir);
    float serial[1] = {5.4766e6f}, blocked[1] = {5.5923e6f}, near_blocked[1] = {5.5924e6f}, wrong[1] = {1.0f};
    write_output(dir / "ref/output.raw", 2, 32, {}, serial, sizeof serial);
    write_output(fs::path(dir / "ref") / kReorderedReferenceDir / "output.raw", 2, 32, {}, blocked,
                 sizeof blocked);
    write_output(dir / "near.raw", 2, 32, {}, near_blocked, sizeof near_blocked);
    write_output(dir / "wrong.raw", 2, 32, {}, wrong, sizeof wrong);
    const OutputComparison near = compare_with_references(dir / "ref", "output", dir / "near.raw");
    CHECK(near.passed());
    const OutputComparison bad = compare_with_references(dir / "ref", "output", dir / "wrong.raw");
    INFO(bad.detail);
    CHECK_FALSE(bad.passed());
    CHECK(bad.detail.find("1 of 1 values differ") != std::string::npos);
    CHECK(bad.detail.find(
              "and against the reference whose float reductions sum in blocks: 1 of 1 values differ") !=
          std::string::npos);
    // Without the second reference the serial one alone decides.
    fs::remove_all(fs::path(dir / "ref") / kReorderedReferenceDir);
    CHECK_FALSE(compare_with_references(dir / "ref", "output", dir / "near.raw").passed());
    // A missing candidate file is a failed comparison naming it.
    const OutputComparison missing = compare_with_references(dir / "ref", "output", dir / "absent.raw");
    CHECK_FALSE(missing.passed());
    CHECK(missing.detail.find("absent.raw") != std::string::npos);
}

TEST_CASE("float outputs agree within tolerance and NaN where a value was expected is a mismatch",
          "[validation]") {
    test::TempDir dir;
    float ref[4] = {1.f, 2.f, 3.f, 1e6f};
    float close[4] = {1.f, 2.0001f, 3.f, 1e6f + 50.f};
    float off[4] = {1.f, 2.f, 3.1f, 1e6f};
    float nan[4] = {1.f, 2.f, std::nanf(""), 1e6f};
    write_output(dir / "ref.raw", 2, 32, {2, 2}, ref, sizeof ref);
    write_output(dir / "close.raw", 2, 32, {2, 2}, close, sizeof close);
    write_output(dir / "off.raw", 2, 32, {2, 2}, off, sizeof off);
    write_output(dir / "nan.raw", 2, 32, {2, 2}, nan, sizeof nan);
    write_output(dir / "shape.raw", 2, 32, {4}, ref, sizeof ref);
    OutputFile a = read_output_file(dir / "ref.raw");
    CHECK(compare_outputs(a, read_output_file(dir / "close.raw")).passed());
    auto c = compare_outputs(a, read_output_file(dir / "off.raw"));
    CHECK(c.mismatches == 1);
    CHECK(c.first_mismatch == 2);
    CHECK_FALSE(compare_outputs(a, read_output_file(dir / "nan.raw")).passed());
    CHECK_FALSE(compare_outputs(a, read_output_file(dir / "shape.raw")).same_shape);
}

TEST_CASE("integer outputs may differ by one, not more", "[validation]") {
    test::TempDir dir;
    uint8_t ref[3] = {0, 100, 255}, near[3] = {1, 99, 255}, far[3] = {0, 102, 255};
    write_output(dir / "a.raw", 1, 8, {3}, ref, 3);
    write_output(dir / "b.raw", 1, 8, {3}, near, 3);
    write_output(dir / "c.raw", 1, 8, {3}, far, 3);
    OutputFile a = read_output_file(dir / "a.raw");
    CHECK(compare_outputs(a, read_output_file(dir / "b.raw")).passed());
    CHECK(compare_outputs(a, read_output_file(dir / "c.raw")).mismatches == 1);
}

TEST_CASE("one outlier in a million passes, a corrupted tile does not", "[validation]") {
    test::TempDir dir;
    std::vector<uint8_t> ref(3000000, 100), few = ref, tile = ref;
    few[12345] = 103; // isolated rounding outliers, as CPU vs GPU math gives
    few[2000000] = 97;
    for (int i = 0; i < 256; ++i)
        tile[500000 + i] = 0; // a 16x16 tile written wrong
    write_output(dir / "ref.raw", 1, 8, {3000000}, ref.data(), ref.size());
    write_output(dir / "few.raw", 1, 8, {3000000}, few.data(), few.size());
    write_output(dir / "tile.raw", 1, 8, {3000000}, tile.data(), tile.size());
    OutputFile a = read_output_file(dir / "ref.raw");
    auto ok = compare_outputs(a, read_output_file(dir / "few.raw"));
    CHECK(ok.passed());
    CHECK(ok.mismatches == 2);
    CHECK(ok.detail.find("isolated outlier") != std::string::npos);
    CHECK_FALSE(compare_outputs(a, read_output_file(dir / "tile.raw")).passed());
}

TEST_CASE("truncated or foreign output files are clear errors", "[validation]") {
    test::TempDir dir;
    float v[4] = {};
    write_output(dir / "ok.raw", 2, 32, {4}, v, sizeof v);
    std::string bytes = test::read_file(dir / "ok.raw");
    test::write_file(dir / "short.raw", bytes.substr(0, bytes.size() - 3));
    test::write_file(dir / "png.raw", "\x89PNG....");
    CHECK_THROWS_WITH(read_output_file(dir / "short.raw"), Catch::Contains("truncated"));
    CHECK_THROWS_WITH(read_output_file(dir / "png.raw"), Catch::Contains("not a gpusched output file"));
    CHECK_THROWS_WITH(read_output_file(dir / "none.raw"), Catch::Contains("missing"));
}
