// No input reaches a shell (issue 29): gpusched starts every subprocess
// with an argv of its own (tuner/subprocess.h), never through sh. Tried
// with the strings a person controls set to names full of shell
// metacharacters, quotes and a newline: the generator's path, a generator
// param's value, the output folder and the database, through One Shot (the
// generator, ptxas, the validation runner's compile and link) and Top 5 on
// POCL (the benchmark harness's link and run). Each must do its work as
// with plain names, and no command hidden in a name may run.

#include <filesystem>

#include "test/catch2_compat.h"

#include "test_sql.h"
#include "test_support.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// A folder name a shell would take apart: word splitting, command
// substitution both ways, separators, redirections, globs, quotes, a
// comment, a variable and a line break. Every command in it would make a
// file whose name starts with "pwned" in the shell's working folder.
const std::string kNastyName =
    "a b;touch pwned-semicolon|touch pwned-pipe&touch pwned-amp $(touch pwned-dollar)`touch pwned-backtick`"
    "'q'\"dq\"<in>out*?[x]{y}~#$HOME\ntouch pwned-newline";

std::vector<std::string> files_named_pwned(const std::string &folder) {
    std::vector<std::string> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->path().filename().string().rfind("pwned", 0) == 0) found.push_back(it->path().string());
    return found;
}

} // namespace

TEST_CASE("names full of shell metacharacters reach every subprocess as one argument and run no command",
          "[bad-input][shell]") {
    test::TempDir dir;
    const std::string nasty = dir / kNastyName;
    fs::create_directories(nasty);
    // The generator itself under a name no shell could take whole.
    const std::string generator = nasty + "/gen $(touch pwned-generator);x";
    fs::copy_file(DRIVER_TEST_GENERATORS, generator);
    fs::permissions(generator, fs::perms::owner_all);
    const std::string param = "schedule=none;touch pwned-param $(touch pwned-param2)`touch pwned-param3`";
    const std::string db = nasty + "/db.sqlite";

    const std::string cwd = fs::current_path().string();
    const auto before_here = files_named_pwned(cwd);

    SECTION("One Shot: the generator, ptxas and the validation runner") {
        ProcessResult r = test::run_gpusched({"oneshot", generator, param, "-g", "tiny_stencil", "--gpu",
                                              "h100", "--samples", "2", "-o", nasty + "/out", "--db", db});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(fs::exists(nasty + "/out/tiny_stencil.schedule.h"));
        CHECK(test::sql_int(db, "SELECT count(*) FROM samples") == 2);
        // The param reached the generator whole: it is stored as given.
        CHECK(test::sql_text(db, "SELECT params FROM pipelines").find("pwned-param3") != std::string::npos);
    }
    SECTION("Top 5 on POCL: the benchmark harness's link and run") {
        ProcessResult r = test::run_gpusched({"tune",
                                              generator,
                                              param,
                                              "-g",
                                              "tiny_stencil",
                                              "--device",
                                              "opencl",
                                              "--gpu",
                                              "h100",
                                              "--mode",
                                              "top5",
                                              "--samples",
                                              "2",
                                              "--top",
                                              "1",
                                              "--beam-size",
                                              "2",
                                              "--passes",
                                              "1",
                                              "--min-time",
                                              "0.005",
                                              "--max-reps",
                                              "5",
                                              "-o",
                                              nasty + "/out",
                                              "--db",
                                              db});
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(test::sql_int(db, "SELECT count(*) FROM samples WHERE benchmark = 'measured'") >= 1);
    }
    CHECK(files_named_pwned(dir.path()).empty());
    CHECK(files_named_pwned(cwd) == before_here);
}
