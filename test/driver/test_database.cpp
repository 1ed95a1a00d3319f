#include <fstream>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "db/export.h"
#include "db/migrations.h"
#include "db/sample_store.h"
#include "test_support.h"

using namespace gpusched;
using namespace gpusched::db;

namespace {

SampleRow make_sample(int idx, double predicted) {
    SampleRow s;
    s.idx = idx;
    s.seed = 100 + idx;
    s.search_config = R"({"beam_size":1})";
    s.decisions = R"({"stages":[]})";
    s.schedule_source = "output.compute_root();";
    s.featurization = {1, 2, 3, 0, 255};
    s.predicted_cost = predicted;
    s.autoschedule_s = 0.25;
    s.compile_s = 1.5;
    s.ptxas_status = "checked";
    s.kernels = {{"k_output", 32, 0, 0, 0, 0, 1}, {"k_blur", 40, 8, 8, 16, 0, 0}};
    return s;
}

int64_t new_run(SampleStore &store) {
    PipelineIdentity p{"/x/app.gen", "0123456789abcdef", "app", "{}", "host-cuda-cuda_capability_86", "h100"};
    RunInfo run{store.upsert_pipeline(p), "oneshot", "gpusched", "{}", "test"};
    return store.start_run(run);
}

int64_t count(Database &db, const std::string &table) {
    auto q = db.prepare("SELECT count(*) FROM " + table);
    q.step();
    return q.column_int(0);
}

void set_user_version(const std::string &path, int v) {
    sqlite3 *raw = nullptr;
    sqlite3_open(path.c_str(), &raw);
    sqlite3_exec(raw, ("PRAGMA user_version = " + std::to_string(v)).c_str(), nullptr, nullptr, nullptr);
    sqlite3_close(raw);
}

} // namespace

TEST_CASE("a new database is created at the newest schema version with WAL", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "sub/dir/samples.sqlite");
    CHECK(db.schema_version() == current_schema_version());
    auto q = db.prepare("PRAGMA journal_mode");
    REQUIRE(q.step());
    CHECK(q.column_text(0) == "wal");
}

TEST_CASE("a sample and its kernels round-trip through the database", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    SampleRow in = make_sample(0, 1.25);
    store.add_sample(run, in);
    auto rows = store.samples_of_run(run);
    REQUIRE(rows.size() == 1);
    const SampleRow &out = rows[0];
    CHECK(out.seed == in.seed);
    CHECK(out.decisions == in.decisions);
    CHECK(out.featurization == in.featurization);
    CHECK(out.predicted_cost == in.predicted_cost);
    CHECK_FALSE(out.runtime_median_ms.has_value());
    REQUIRE(out.kernels.size() == 2);
    CHECK(out.kernels[0].name == "k_blur");
    CHECK(out.kernels[0].spill_store_bytes == 8);
}

TEST_CASE("the same pipeline identity is registered once", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    PipelineIdentity p{"/x/app.gen", "abc", "app", "{}", "t", "h100"};
    int64_t a = store.upsert_pipeline(p);
    CHECK(store.upsert_pipeline(p) == a);
    p.gpu = "a100";
    CHECK(store.upsert_pipeline(p) != a);
}

TEST_CASE("a failed transaction leaves no partial rows", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    CHECK_THROWS(db.transaction([&] {
        int64_t run = new_run(store);
        store.add_sample(run, make_sample(0, 1.0));
        store.add_sample(run, make_sample(0, 2.0));  // same (run, batch, idx): constraint violation
    }));
    CHECK(count(db, "pipelines") == 0);
    CHECK(count(db, "runs") == 0);
    CHECK(count(db, "samples") == 0);
    CHECK(count(db, "kernels") == 0);
}

TEST_CASE("runs and the best sample per pipeline can be queried", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    SampleRow fast = make_sample(0, 2.0), slow = make_sample(1, 1.0);
    fast.runtime_median_ms = 0.5;
    slow.runtime_median_ms = 0.9;
    int64_t fast_id = store.add_sample(run, fast);
    int64_t slow_id = store.add_sample(run, slow);
    store.finish_run(run, "finished", slow_id);
    auto runs = store.list_runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].samples == 2);
    CHECK(runs[0].status == "finished");
    auto best = store.best_per_pipeline();
    REQUIRE(best.size() == 1);
    CHECK(best[0].sample_id == fast_id);  // measured runtime beats prediction
    CHECK(best[0].runtime_ms == 0.5);
}

TEST_CASE("stored samples of a run are listed for resuming", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    store.add_sample(run, make_sample(3, 1.0));
    store.add_sample(run, make_sample(1, 1.0));
    auto keys = store.stored_sample_keys(run);
    REQUIRE(keys.size() == 2);
    CHECK(keys[0] == std::make_pair(0, 1));
    CHECK(keys[1] == std::make_pair(0, 3));
}

TEST_CASE("export writes one CSV line per sample and valid JSON", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    SampleRow s = make_sample(0, 1.0);
    s.error = "has, a comma";
    store.add_sample(run, s);
    store.add_sample(run, make_sample(1, 2.0));
    std::string csv = export_samples(db, ExportFormat::Csv);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);  // header + 2 samples
    CHECK(csv.find("\"has, a comma\"") != std::string::npos);
    const std::string json = export_samples(db, ExportFormat::Json);
    INFO(json);
    const nlohmann::json rows = nlohmann::json::parse(json);  // throws on invalid JSON
    REQUIRE(rows.is_array());
    REQUIRE(rows.size() == 2);
    CHECK(rows[0]["idx"] == 0);
    CHECK(rows[0]["error"] == "has, a comma");
    CHECK(rows[0]["spill_bytes"] == 16);
    CHECK(rows[0]["kernels"] == 2);
    CHECK(rows[0]["max_registers"] == 40);
    CHECK(rows[0]["featurization_bytes"] == 5);
    CHECK(rows[0]["predicted_cost"] == 1.0);
    CHECK(rows[0]["generator_name"] == "app");
    CHECK(rows[0]["params"].is_object());
    CHECK(rows[1]["idx"] == 1);
    CHECK(rows[1]["predicted_cost"] == 2.0);
}

TEST_CASE("a file that is not SQLite is refused and left untouched", "[db]") {
    test::TempDir dir;
    test::write_file(dir / "notes.txt", "these are my notes\n");
    CHECK_THROWS_WITH(Database::open(dir / "notes.txt"), Catch::Contains("not a SQLite database"));
    CHECK(test::read_file(dir / "notes.txt") == "these are my notes\n");
}

TEST_CASE("a database written by a newer gpusched is refused", "[db]") {
    test::TempDir dir;
    { Database::open(dir / "samples.sqlite"); }
    set_user_version(dir / "samples.sqlite", current_schema_version() + 1);
    CHECK_THROWS_WITH(Database::open(dir / "samples.sqlite"), Catch::Contains("newer than this gpusched supports"));
}

TEST_CASE("another application's SQLite database is refused", "[db]") {
    test::TempDir dir;
    sqlite3 *raw = nullptr;
    sqlite3_open((dir / "other.sqlite").c_str(), &raw);
    sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    CHECK_THROWS_WITH(Database::open(dir / "other.sqlite"), Catch::Contains("another application"));
}

TEST_CASE("migrations are numbered consecutively from 1", "[db]") {
    // The schema has had more than one version (migration 2 added
    // samples.validation_detail).
    REQUIRE(migrations().size() >= 2);
    int expected = 1;
    for (const auto &m : migrations()) CHECK(m.version == expected++);
    CHECK(current_schema_version() == static_cast<int>(migrations().size()));
}

TEST_CASE("querying a missing database names it and creates nothing", "[db]") {
    test::TempDir dir;
    CHECK_THROWS_WITH(Database::open_existing(dir / "none.sqlite"), Catch::Contains("none.sqlite"));
    CHECK_FALSE(std::ifstream(dir / "none.sqlite").good());
}

TEST_CASE("a database of an older schema is migrated when opened", "[db]") {
    test::TempDir dir;
    {
        // A version-1 file, as the first release wrote it.
        sqlite3 *raw = nullptr;
        sqlite3_open((dir / "old.sqlite").c_str(), &raw);
        sqlite3_exec(raw, migrations()[0].sql, nullptr, nullptr, nullptr);
        sqlite3_exec(raw, ("PRAGMA user_version = 1; PRAGMA application_id = " + std::to_string(kApplicationId)).c_str(),
                     nullptr, nullptr, nullptr);
        sqlite3_close(raw);
    }
    Database db = Database::open_existing(dir / "old.sqlite");
    CHECK(db.schema_version() == current_schema_version());
    db.exec("SELECT validation_detail FROM samples");  // added by migration 2
}

TEST_CASE("processes creating the same new database at once all open it at the newest schema", "[db]") {
    // Each thread holds its own SQLite connection, as separate gpusched
    // processes (nightly jobs started together) would.
    test::TempDir dir;
    for (int round = 0; round < 20; round++) {
        const std::string path = dir / ("new-" + std::to_string(round) + ".sqlite");
        std::vector<std::string> errors(6);
        std::vector<int> versions(6, -1);
        std::vector<std::thread> openers;
        for (int t = 0; t < 6; t++) {
            openers.emplace_back([&, t] {
                try {
                    Database db = Database::open(path);
                    versions[t] = db.schema_version();
                } catch (const std::exception &e) {
                    errors[t] = e.what();
                }
            });
        }
        for (auto &th : openers) th.join();
        for (int t = 0; t < 6; t++) {
            INFO("round " << round << " opener " << t);
            CHECK(errors[t] == "");
            CHECK(versions[t] == current_schema_version());
        }
    }
}
