// The sample database on a disk that fills up, and on one mounted read-only
// (issue 29): each is a small tmpfs of its own, mounted for the test (the
// suite runs as root: the bundle and Slurm tests need it too). A run that
// cannot write says so in one line naming the database and exits 1; the
// samples committed before are all there, once; the file passes SQLite's
// integrity check; and a read-only database can still be queried.

#include <filesystem>
#include <fstream>

#include "test/catch2_compat.h"

#include "test_sql.h"
#include "test_support.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// A tmpfs of `size` (mount's -o size=) at `where` for the life of the object.
class Tmpfs {
public:
    Tmpfs(const std::string &where, const std::string &size) : where_(where) {
        fs::create_directories(where);
        ProcessSpec spec;
        spec.argv = {"mount", "-t", "tmpfs", "-o", "size=" + size, "gpusched-test", where};
        const ProcessResult r = run_process(spec);
        INFO("mount: " << r.describe_failure() << " " << r.err);
        REQUIRE(r.ok()); // needs root, as the rest of the suite
    }
    ~Tmpfs() {
        ProcessSpec spec;
        spec.argv = {"umount", "-l", where_};
        run_process(spec);
    }
    Tmpfs(const Tmpfs &) = delete;
    Tmpfs &operator=(const Tmpfs &) = delete;

    void remount_read_only() {
        ProcessSpec spec;
        spec.argv = {"mount", "-o", "remount,ro", where_};
        const ProcessResult r = run_process(spec);
        INFO("remount: " << r.err);
        REQUIRE(r.ok());
    }

    // Writes a file until the file system says it is full.
    void fill() {
        std::ofstream f(where_ + "/filler", std::ios::binary);
        const std::string block(64 * 1024, 'x');
        while (f.write(block.data(), static_cast<std::streamsize>(block.size())) && f.flush()) {
        }
    }

private:
    std::string where_;
};

std::vector<std::string> oneshot(const test::TempDir &dir, const std::string &db, const std::string &source) {
    return {"oneshot",
            DRIVER_TEST_GENERATORS,
            "-g",
            "tiny_stencil",
            "--autoscheduler",
            source,
            "--samples",
            "2",
            "--beam-size",
            "2",
            "--passes",
            "1",
            "-o",
            dir / "out",
            "--db",
            db,
            "--no-validate"};
}

// One Shot's first run into the database: the samples a fault must not lose.
std::string first_run(const test::TempDir &dir, const std::string &db) {
    ProcessResult first = test::run_gpusched(oneshot(dir, db, "gpusched"));
    INFO("first run: " << first.err);
    REQUIRE(first.ok());
    const std::string committed = test::stored_sample_keys(db);
    REQUIRE(!committed.empty());
    return committed;
}

// gpusched run as nobody (uid and gid 65534, no groups), with HOME set: the
// suite runs as root, to whom every file and folder is writable.
ProcessResult run_gpusched_as_nobody(const std::vector<std::string> &args, const std::string &home) {
    ProcessSpec spec;
    spec.argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GPUSCHED_BINARY};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = {{"HOME", home}};
    return run_process(spec);
}

int error_lines(const std::string &text) {
    int n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        n += line.rfind("error: ", 0) == 0;
    return n;
}

} // namespace

TEST_CASE("a database whose disk is full refuses the run in one line and keeps every sample committed before",
          "[db][fault]") {
    test::TempDir dir;
    Tmpfs disk(dir / "disk", "1m");
    const std::string db = dir / "disk/db.sqlite";
    const std::string before = first_run(dir, db);

    disk.fill();
    ProcessResult full = test::run_gpusched(oneshot(dir, db, "gpusched"));
    INFO("on the full disk: exit " << full.exit_code << "\n" << full.err);
    CHECK(full.exit_code == 1);
    CHECK(full.term_signal == 0);
    CHECK(error_lines(full.err) == 1);
    CHECK(full.err.find(db) != std::string::npos);
    CHECK(full.err.find("no space left") != std::string::npos);

    // Room again: the file is whole and holds what was committed, once.
    fs::remove(dir / "disk/filler");
    CHECK(test::sql_text(db, "PRAGMA integrity_check") == "ok");
    CHECK(test::stored_sample_keys(db) == before);
    // And the next run writes to it as usual.
    ProcessResult again = test::run_gpusched(oneshot(dir, db, "gpusched"));
    INFO("after making room: " << again.err);
    CHECK(again.ok());
    CHECK(test::sql_int(db, "SELECT count(*) FROM runs WHERE status = 'finished'") == 2);
}

TEST_CASE("a database on a read-only disk is queried as usual and a run that would write to it is refused in "
          "one line",
          "[db][fault]") {
    test::TempDir dir;
    Tmpfs disk(dir / "disk", "4m");
    const std::string db = dir / "disk/db.sqlite";
    const std::string before = first_run(dir, db);
    disk.remount_read_only();

    ProcessResult runs = test::run_gpusched({"db", "--db", db, "runs", "--json"});
    INFO("db runs: " << runs.err);
    CHECK(runs.ok());
    CHECK(runs.out.find("tiny_stencil") != std::string::npos);

    ProcessResult write = test::run_gpusched(oneshot(dir, db, "gpusched"));
    INFO("a run: exit " << write.exit_code << "\n" << write.err);
    CHECK(write.exit_code == 1);
    CHECK(error_lines(write.err) == 1);
    CHECK(write.err.find(db) != std::string::npos);
    CHECK(write.err.find("read-only") != std::string::npos);
    CHECK(test::stored_sample_keys(db) == before);
}

TEST_CASE("a database file this user cannot write is refused in one line before any search", "[db][fault]") {
    // As a user who may read the file but not write it or its folder (the
    // suite runs as root, to whom every file is writable): SQLite opens such
    // a file read-only without a word, and the run used to fail at its
    // first INSERT, after the search and the validation (issue 57).
    test::TempDir dir;
    const std::string db = dir / "dbdir/db.sqlite";
    fs::create_directories(dir / "dbdir");
    const std::string before = first_run(dir, db);
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
    fs::create_directories(dir / "user_out");
    fs::permissions(dir / "user_out", fs::perms::all);
    std::vector<std::string> args = oneshot(dir, db, "gpusched");
    for (auto &a : args)
        if (a == dir / "out") a = dir / "user_out";
    const ProcessResult r = run_gpusched_as_nobody(args, dir / "user_out");
    INFO("as nobody: " << r.describe_failure() << "\n" << r.err);
    REQUIRE(r.started);
    CHECK(r.exit_code == 1);
    CHECK(error_lines(r.err) == 1);
    CHECK(r.err.find(db) != std::string::npos);
    CHECK(r.err.find("read-only to this user") != std::string::npos);
    // Before any search: no sample was made.
    CHECK_FALSE(fs::exists(dir / "user_out/samples"));
    CHECK(test::stored_sample_keys(db) == before);
}

TEST_CASE("an output folder this user cannot write is refused in one line before any search", "[db][fault]") {
    // A folder the user may read but not write (the suite runs as root,
    // to whom every folder is writable): the run must say so before it
    // searches, not when it first writes a sample (issue 57).
    test::TempDir dir;
    fs::create_directories(dir / "dbdir");
    fs::permissions(dir / "dbdir", fs::perms::all);
    fs::create_directories(dir / "out");
    for (const std::string &p : {dir.path(), dir / "out"})
        fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    const std::string db = dir / "dbdir/db.sqlite";
    const ProcessResult r = run_gpusched_as_nobody(oneshot(dir, db, "gpusched"), dir / "dbdir");
    INFO("as nobody: " << r.describe_failure() << "\n" << r.err);
    REQUIRE(r.started);
    CHECK(r.exit_code == 1);
    CHECK(error_lines(r.err) == 1);
    CHECK(r.err.find("output directory '" + (dir / "out") + "' is not writable") != std::string::npos);
    // Before any search: no sample folder, no run stored.
    CHECK(fs::is_empty(dir / "out"));
    CHECK((!fs::exists(db) || test::sql_int(db, "SELECT count(*) FROM runs") == 0));
}
