// The report as a person sees it: loaded from disk in Debian's headless
// Chromium, with no console error and no network request, and a screenshot
// of the whole page (left in the build tree for a person to look at). The
// checker itself is tested on a page that has both faults, so a browser
// check that sees nothing cannot pass for a clean page.

#include <filesystem>

#include "test/catch2_compat.h"

#include "headless_chromium.h"
#include "recorded_db.h"
#include "report_page.h"
#include "test_support.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string> &lines) {
    std::string out;
    for (const auto &l : lines)
        out += l + "\n";
    return out;
}

} // namespace

TEST_CASE("the report opens from disk in headless Chromium with no console error and no network request",
          "[report][browser]") {
    const test::RecordedDb &r = test::recorded_db();
    INFO(r.error);
    REQUIRE(r.error.empty());
    test::TempDir dir;
    ProcessResult p = test::run_gpusched({"report", "--db", r.db_path, "-o", dir / "report.html"});
    INFO("stderr: " << p.err);
    REQUIRE(p.ok());

    const std::string shot = REPORT_SCREENSHOT;
    fs::remove(shot);
    const test::PageLoad page = test::load_in_headless_chromium(dir / "report.html", shot);
    INFO("console errors:\n" << joined(page.console_errors) << "requests:\n" << joined(page.requests));
    REQUIRE(page.failure == "");
    CHECK(page.loaded);
    CHECK(page.console_errors.empty());
    CHECK(page.requests.empty());
    // The whole page, three sections of plots tall, as a real PNG.
    CHECK(page.page_height > 2000);
    const std::string png = test::read_file(shot);
    REQUIRE(png.size() > 20000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
}

TEST_CASE("the Chromium check sees the console errors and network requests of a page that has them",
          "[browser]") {
    test::TempDir dir;
    test::write_file(dir / "faulty.html", "<!DOCTYPE html><html><head><title>faulty</title></head><body>"
                                          "<script>console.error('planted console error');</script>"
                                          "<img src=\"http://127.0.0.1:9/planted.png\" alt=\"\">"
                                          "<svg width=\"10\" height=\"10\"><path d=\"M0 0 Lnan 3\"/></svg>"
                                          "</body></html>");
    const test::PageLoad page = test::load_in_headless_chromium(dir / "faulty.html", "");
    INFO("console errors:\n" << joined(page.console_errors) << "requests:\n" << joined(page.requests));
    REQUIRE(page.failure == "");
    CHECK(page.loaded);
    CHECK(test::count(joined(page.console_errors), "planted console error") == 1);
    CHECK(test::count(joined(page.console_errors), "attribute d") == 1); // the malformed SVG path
    REQUIRE(page.requests.size() == 1);
    CHECK(page.requests[0] == "http://127.0.0.1:9/planted.png");
}

TEST_CASE("a missing Chromium fails the check with a message saying what to install", "[browser]") {
    // PATH without Chromium: the check must fail, not pass for lack of a browser.
    const char *saved = std::getenv("PATH");
    const std::string old = saved ? saved : "";
    setenv("PATH", "/nonexistent", 1);
    const test::PageLoad page = test::load_in_headless_chromium("/dev/null", "");
    setenv("PATH", old.c_str(), 1);
    CHECK_FALSE(page.loaded);
    CHECK(page.failure.find("chromium is not installed") != std::string::npos);
    CHECK(page.failure.find("install-deps.sh --tests") != std::string::npos);
}
