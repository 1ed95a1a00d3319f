// `gpusched bench` on a small manifest of the driver's test generators.

#include <filesystem>
#include <string>
#include <vector>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/subprocess.h"

using namespace gpusched;

namespace {

std::string manifest(const std::string &generator_path) {
    const std::string gen = std::filesystem::path(generator_path).filename().string();
    return R"({"apps": [
      {"name": "stencil", "generator": ")" +
           gen + R"(", "generator_name": "tiny_stencil", "params": {"width": 128}},
      {"name": "broken", "generator": ")" +
           gen + R"(", "generator_name": "fails_to_generate"}]})";
}

ProcessResult bench(const test::TempDir &dir, std::vector<std::string> extra) {
    std::vector<std::string> args = {"bench",
                                     "--suite",
                                     dir / "suite.json",
                                     "--build-dir",
                                     std::filesystem::path(DRIVER_TEST_GENERATORS).parent_path().string(),
                                     "--work-dir",
                                     dir / "work",
                                     "-o",
                                     dir / "report.md"};
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_gpusched(args);
}

} // namespace

TEST_CASE("bench writes one table row per app and source, with the command that made it", "[bench]") {
    test::TempDir dir;
    test::write_file(dir / "suite.json", manifest(DRIVER_TEST_GENERATORS));
    auto r = bench(dir, {"--apps", "stencil", "--sources", "li2018,naive"});
    INFO(r.err);
    REQUIRE(r.ok());
    const std::string md = test::read_file(dir / "report.md");
    CHECK(md.find("gpusched bench --suite") != std::string::npos);
    CHECK(md.find("| stencil | li2018 |") != std::string::npos);
    CHECK(md.find("| stencil | naive |") != std::string::npos);
    CHECK(md.find("| checked |") != std::string::npos);
}

TEST_CASE("bench gives every row of an app its roofline from the gpusched row's search",
          "[bench][roofline]") {
    test::TempDir dir;
    test::write_file(dir / "suite.json", manifest(DRIVER_TEST_GENERATORS));
    auto r = bench(dir, {"--apps", "stencil", "--sources", "gpusched,naive", "--samples", "1"});
    INFO(r.err);
    REQUIRE(r.ok());
    const std::string md = test::read_file(dir / "report.md");
    CHECK(md.find("| roofline ms | x roofline |") != std::string::npos);
    // The same bound on both rows: 128 x 128 floats in and out at 3.35 TB/s
    // (0.039 us), or the operations at 67 TFLOP/s if longer; no runtime here.
    for (const std::string source : {"gpusched", "naive"}) {
        INFO(source);
        const auto row = md.find("| stencil | " + source + " |");
        REQUIRE(row != std::string::npos);
        const std::string line = md.substr(row, md.find('\n', row) - row);
        std::vector<std::string> cells;
        for (std::size_t at = 1, next; (next = line.find(" |", at)) != std::string::npos; at = next + 2)
            cells.push_back(line.substr(at + 1, next - at - 1));
        REQUIRE(cells.size() == 18);
        CHECK(cells[14] == "—"); // runtime: no GPU here
        CHECK(std::stod(cells[15]) >= 2.0 * 128 * 128 * 4 / 3350e9 * 1e3 * 0.999);
        CHECK(cells[16] == "—");
    }
}

TEST_CASE("bench records a failing app as a failed row and exits 1", "[bench]") {
    test::TempDir dir;
    test::write_file(dir / "suite.json", manifest(DRIVER_TEST_GENERATORS));
    auto r = bench(dir, {"--apps", "broken", "--sources", "naive"});
    CHECK(r.exit_code == 1);
    CHECK(test::read_file(dir / "report.md").find("| broken | naive | failed: ") != std::string::npos);
}

TEST_CASE("bench refuses an app the manifest does not have", "[bench][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "suite.json", manifest(DRIVER_TEST_GENERATORS));
    auto r = bench(dir, {"--apps", "sgemm"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("no app named 'sgemm'") != std::string::npos);
}

TEST_CASE("bench refuses a manifest that is not JSON", "[bench][bad-input]") {
    test::TempDir dir;
    test::write_file(dir / "suite.json", "apps: [stencil]");
    auto r = bench(dir, {});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("must be a JSON object") != std::string::npos);
}
