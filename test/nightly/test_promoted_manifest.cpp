// The schedule folder's promotion record (tuner/modes/nightly/promoted_manifest.h)
// on real files: what is promoted is written whole and recorded with its
// checksums, no temporary file is left behind, and files changed after the
// record (a promotion cut short between the files and the manifest, or a
// hand edit) are noticed.

#include <filesystem>

#include "test/catch2_compat.h"

#include "test_support.h"
#include "tuner/modes/nightly/promoted_manifest.h"

using namespace gpusched;
namespace fs = std::filesystem;

TEST_CASE("a promoted schedule is recorded with its checksums and files changed after the record are noticed",
          "[nightly][promotion]") {
    test::TempDir dir;
    const std::string run = dir / "run";
    const std::string schedules = dir / "schedules";
    fs::create_directories(run);
    fs::create_directories(schedules);
    test::write_file(run + "/tiny_stencil.schedule.h", "// schedule of night 1\n");
    test::write_file(run + "/tiny_stencil.gpusched.json", "{\"decisions\": [1, 2]}\n");
    CHECK(load_promoted_manifest(schedules).pipelines.empty()); // none yet

    PromotedEntry e;
    e.time = {"pocl-cpu", 0.05, 0.045, 20, 7, 70};
    e.generator_name = "tiny_stencil";
    e.params = "{}";
    e.files = promote_schedule_files(schedules, "stencil", run + "/tiny_stencil.schedule.h",
                                     run + "/tiny_stencil.gpusched.json");
    PromotedManifest m;
    m.pipelines["stencil"] = e;
    save_promoted_manifest(schedules, m);

    CHECK(test::read_file(schedules + "/stencil.schedule.h") == "// schedule of night 1\n");
    CHECK(test::read_file(schedules + "/stencil.gpusched.json") == "{\"decisions\": [1, 2]}\n");
    // Only the promoted files and the manifest: no temporary left over.
    int entries = 0;
    for (const auto &f : fs::directory_iterator(schedules)) {
        ++entries;
        CHECK(f.path().filename().string().find(".tmp-") == std::string::npos);
    }
    CHECK(entries == 3);

    const PromotedManifest back = load_promoted_manifest(schedules);
    REQUIRE(back.pipelines.count("stencil") == 1);
    const PromotedEntry &b = back.pipelines.at("stencil");
    CHECK(b.time.median_ms == 0.05);
    CHECK(b.time.run_id == 7);
    CHECK(b.files.size() == 2);
    CHECK(promoted_files_intact(schedules, b));

    // A newer schedule in the folder under the old record: not the recorded one.
    test::write_file(schedules + "/stencil.schedule.h", "// schedule of night 2\n");
    CHECK_FALSE(promoted_files_intact(schedules, b));
    fs::remove(schedules + "/stencil.schedule.h");
    CHECK_FALSE(promoted_files_intact(schedules, b));

    // A manifest that is not one is refused, naming it.
    test::write_file(schedules + "/promoted.json", "{ half");
    CHECK_THROWS_WITH(load_promoted_manifest(schedules),
                      Catch::Contains(schedules + "/promoted.json") && Catch::Contains("not readable"));
}
