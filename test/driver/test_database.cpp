#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test/catch2_compat.h"
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

TEST_CASE("a column read by a name the query does not return throws, naming the column and the query",
          "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    new_run(store);

    auto q = db.prepare("SELECT id, status FROM runs");
    REQUIRE(q.step());
    CHECK(q.text("status") == "running");
    CHECK_THROWS_AS(q.text("stauts"), DbError);
    CHECK_THROWS_WITH(q.text("stauts"), Catch::Contains("'stauts'"));
    CHECK_THROWS_WITH(q.integer("mode"), Catch::Contains("SELECT id, status FROM runs"));
    CHECK_THROWS_WITH(q.optional_real("mode"), Catch::Contains("its columns: id, status"));

    // An expression has no name to guess: it needs AS.
    auto unnamed = db.prepare("SELECT count(*) FROM runs");
    REQUIRE(unnamed.step());
    CHECK_THROWS_WITH(unnamed.integer("count"), Catch::Contains("'count'"));

    // Two columns of one name: neither is read in the other's place.
    auto twice = db.prepare("SELECT r.id, p.id FROM runs r JOIN pipelines p ON p.id = r.pipeline_id");
    REQUIRE(twice.step());
    CHECK_THROWS_WITH(twice.integer("id"), Catch::Contains("more than one result column"));
}

TEST_CASE("a column read by name gives the value of the column it names, NULL included", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    auto q = db.prepare("SELECT NULL AS absent, x'01ff' AS bytes, 2.5 AS real_value, 'text' AS text_value, "
                        "42 AS integer_value");
    REQUIRE(q.step());

    CHECK(q.integer("integer_value") == q.column_int(4));
    CHECK(q.integer("integer_value") == 42);
    CHECK(q.real("real_value") == q.column_double(2));
    CHECK(q.text("text_value") == q.column_text(3));
    CHECK(q.text("text_value") == "text");
    CHECK(q.blob("bytes") == std::vector<uint8_t>{0x01, 0xff});

    CHECK(q.is_null("absent"));
    CHECK_FALSE(q.is_null("integer_value"));
    CHECK(q.optional_integer("integer_value") == std::optional<int64_t>(42));
    CHECK(q.optional_real("real_value") == std::optional<double>(2.5));
    CHECK(q.optional_text("text_value") == std::optional<std::string>("text"));
    CHECK_FALSE(q.optional_integer("absent"));
    CHECK_FALSE(q.optional_real("absent"));
    CHECK_FALSE(q.optional_text("absent"));
    // NULL read as a plain value reads as SQLite converts it, as by position.
    CHECK(q.integer("absent") == q.column_int(0));
    CHECK(q.text("absent") == q.column_text(0));
    CHECK(q.blob("absent").empty());

    CHECK(q.column_names() ==
          std::vector<std::string>{"absent", "bytes", "real_value", "text_value", "integer_value"});
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
        store.add_sample(run, make_sample(0, 2.0)); // same (run, batch, idx): constraint violation
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
    CHECK(best[0].sample_id == fast_id); // measured runtime beats prediction
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
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 3); // header + 2 samples
    CHECK(csv.find("\"has, a comma\"") != std::string::npos);
    const std::string json = export_samples(db, ExportFormat::Json);
    INFO(json);
    const nlohmann::json rows = nlohmann::json::parse(json); // throws on invalid JSON
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
    CHECK_THROWS_WITH(Database::open(dir / "samples.sqlite"),
                      Catch::Contains("newer than this gpusched supports"));
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
    for (const auto &m : migrations())
        CHECK(m.version == expected++);
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
        sqlite3_exec(
            raw,
            ("PRAGMA user_version = 1; PRAGMA application_id = " + std::to_string(kApplicationId)).c_str(),
            nullptr, nullptr, nullptr);
        sqlite3_close(raw);
    }
    Database db = Database::open_existing(dir / "old.sqlite");
    CHECK(db.schema_version() == current_schema_version());
    db.exec("SELECT validation_detail FROM samples"); // added by migration 2
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
        for (auto &th : openers)
            th.join();
        for (int t = 0; t < 6; t++) {
            INFO("round " << round << " opener " << t);
            CHECK(errors[t] == "");
            CHECK(versions[t] == current_schema_version());
        }
    }
}

namespace {

MeasurementRow measured_on(const std::string &device, double median_ms) {
    MeasurementRow m;
    m.device = device;
    m.benchmark = "measured";
    m.runtime_min_ms = median_ms * 0.9;
    m.runtime_median_ms = median_ms;
    m.runtime_reps = 10;
    m.validation = "passed";
    m.detail = R"({"reps":10})";
    return m;
}

} // namespace

TEST_CASE("a measurement is written onto its sample with the device it ran on", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    int64_t id = store.add_sample(run, make_sample(0, 1.0));
    store.record_measurement(id, measured_on("NVIDIA H100 80GB HBM3", 0.25));
    auto rows = store.samples_of_run(run);
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].device);
    CHECK(*rows[0].device == "NVIDIA H100 80GB HBM3");
    CHECK(rows[0].benchmark == "measured");
    CHECK(rows[0].runtime_median_ms == 0.25);
    CHECK(rows[0].runtime_reps == 10);
    CHECK(rows[0].benchmark_detail == R"({"reps":10})");
    CHECK(rows[0].kernels.size() == 2); // the kernels stay

    // An outcome the schema does not know is refused, not stored.
    MeasurementRow bad = measured_on("x", 1.0);
    bad.benchmark = "fast";
    CHECK_THROWS_AS(store.record_measurement(id, bad), DbError);
    CHECK(store.samples_of_run(run)[0].benchmark == "measured");
}

TEST_CASE("best per pipeline keeps each device's fastest and never compares devices", "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    const int64_t gpu_slow = store.add_sample(run, make_sample(0, 1.0));
    const int64_t gpu_fast = store.add_sample(run, make_sample(1, 1.0));
    const int64_t pocl = store.add_sample(run, make_sample(2, 1.0));
    store.record_measurement(gpu_slow, measured_on("NVIDIA H100", 0.5));
    store.record_measurement(gpu_fast, measured_on("NVIDIA H100", 0.2));
    store.record_measurement(pocl, measured_on("pocl-AMD EPYC", 0.01)); // faster, but a CPU
    auto best = store.best_per_pipeline();
    REQUIRE(best.size() == 2);
    for (const auto &b : best) {
        REQUIRE(b.device);
        if (*b.device == "NVIDIA H100") {
            CHECK(b.sample_id == gpu_fast);
            CHECK(b.runtime_ms == 0.2);
        } else {
            CHECK(*b.device == "pocl-AMD EPYC");
            CHECK(b.sample_id == pocl);
        }
    }
    // Training data can be asked for one device only.
    CHECK(store.measured_samples("", "NVIDIA H100").size() == 2);
    CHECK(store.measured_samples("", "pocl-AMD EPYC").size() == 1);
}

TEST_CASE("stats count measured, failed and spilled samples per device with each run's rank correlation",
          "[db]") {
    test::TempDir dir;
    Database db = Database::open(dir / "samples.sqlite");
    SampleStore store(db);
    int64_t run = new_run(store);
    // Predictions 1, 2, 3 against times 1, 3, 2: Spearman 0.5, Kendall 1/3.
    std::vector<int64_t> ids;
    for (int i = 0; i < 4; ++i) {
        SampleRow s = make_sample(i, 1.0 + i);
        if (i != 1) s.kernels = {{"k_output", 32, 0, 0, 0, 0, 1}}; // only sample 1 spills
        ids.push_back(store.add_sample(run, s));
    }
    store.record_measurement(ids[0], measured_on("gpu", 1.0));
    store.record_measurement(ids[1], measured_on("gpu", 3.0));
    store.record_measurement(ids[2], measured_on("gpu", 2.0));
    MeasurementRow crash;
    crash.device = "gpu";
    crash.benchmark = "crashed";
    crash.status = "failed";
    crash.error = "killed by signal 11";
    store.record_measurement(ids[3], crash);
    auto stats = store.stats();
    REQUIRE(stats.size() == 1);
    const DeviceStats &g = stats[0];
    REQUIRE(g.device);
    CHECK(*g.device == "gpu");
    CHECK(g.samples == 4);
    CHECK(g.measured == 3);
    CHECK(g.failed == 1);
    CHECK(g.spilled == 1);
    CHECK(g.best_ms == 1.0);
    CHECK(g.median_ms == 2.0);
    REQUIRE(g.runs.size() == 1);
    CHECK(g.runs[0].measured == 3);
    CHECK(*g.runs[0].spearman == Approx(0.5));
    CHECK(*g.runs[0].kendall == Approx(1.0 / 3.0));
}

TEST_CASE("a version-2 database gains the benchmark columns and keeps its samples", "[db]") {
    test::TempDir dir;
    {
        sqlite3 *raw = nullptr;
        sqlite3_open((dir / "v2.sqlite").c_str(), &raw);
        sqlite3_exec(raw, migrations()[0].sql, nullptr, nullptr, nullptr);
        sqlite3_exec(raw, migrations()[1].sql, nullptr, nullptr, nullptr);
        sqlite3_exec(
            raw,
            ("PRAGMA user_version = 2; PRAGMA application_id = " + std::to_string(kApplicationId)).c_str(),
            nullptr, nullptr, nullptr);
        sqlite3_exec(
            raw,
            "INSERT INTO pipelines VALUES (1, '/g', 'h', 'app', '{}', 't', 'h100', '2024');"
            "INSERT INTO runs (id, pipeline_id, mode, autoscheduler, config, status, gpusched_version) "
            "VALUES (1, 1, 'oneshot', 'gpusched', '{}', 'finished', 'old');"
            "INSERT INTO samples (run_id, batch, idx, ptxas_status, status, runtime_median_ms) "
            "VALUES (1, 0, 0, 'checked', 'ok', 0.7);",
            nullptr, nullptr, nullptr);
        sqlite3_close(raw);
    }
    Database db = Database::open_existing(dir / "v2.sqlite");
    CHECK(db.schema_version() == current_schema_version());
    SampleStore store(db);
    auto rows = store.samples_of_run(1);
    REQUIRE(rows.size() == 1);
    CHECK_FALSE(rows[0].device); // measured before devices were recorded
    CHECK(rows[0].benchmark.empty());
    CHECK(rows[0].runtime_median_ms == 0.7);
}
