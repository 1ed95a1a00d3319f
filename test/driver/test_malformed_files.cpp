// Malformed files (issue 29): a search config, a nightly config and a
// weights file, each broken the ways such files break (truncated, the wrong
// JSON type, a misspelt or unknown key, a value of the wrong type or out of
// range, a file of the right kind cut short or from a newer gpusched). Each
// run must exit 1 with one error line that names the file or the field,
// crash nowhere, and leave no row in the database. With
// GPUSCHED_MALFORMED_TABLE=FILE the table is written there as Markdown
// (docs/results/reliability.md shows it).

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test/catch2_compat.h"
#include <nlohmann/json.hpp>

#include "costmodel/default_weights.h"
#include "costmodel/weights_file.h"
#include "test_sql.h"
#include "test_support.h"

using namespace gpusched;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Case {
    std::string file;    // which kind of file
    std::string what;    // how it is broken
    std::string content; // the file's bytes
    std::string names;   // a word the error line must hold (the field), besides the file's path
};

json valid_nightly(const test::TempDir &dir) {
    return {{"database", dir / "db.sqlite"},
            {"schedules", dir / "schedules"},
            {"work_dir", dir / "work"},
            {"budget", "60s"},
            {"pipelines", json::array({{{"name", "stencil"},
                                        {"generator", DRIVER_TEST_GENERATORS},
                                        {"generator_name", "tiny_stencil"},
                                        {"gpu", "h100"},
                                        {"device", "opencl"},
                                        {"mode", "top5"},
                                        {"samples", 2}}})}};
}

std::string weights_bytes() {
    const auto bytes = encode_weights(default_weights());
    return std::string(bytes.begin(), bytes.end());
}

std::vector<Case> cases(const test::TempDir &dir) {
    std::vector<Case> out;
    // --search-config: extra plugin keys (docs/search.md).
    for (const auto &[what, content, names] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"not an object", "[1, 2]", "JSON object"},
             {"cut short", "{\"check_launches\": tr", "JSON object"},
             {"a key the command line owns", R"({"beam_size": 4})", "beam_size"},
             {"an unknown key", R"({"chek_launches": true})", "chek_launches"},
             {"a value of the wrong type", R"({"atomic_reductions": "yes"})", "atomic_reductions"},
             {"a weights path that is a number", R"({"weights_path": 7})", "weights_path"},
             {"a weights path to no file", R"({"weights_path": "/no/such/weights"})", "weights"},
         })
        out.push_back({"search config", what, content, names});
    // nightly config (docs/cron.md).
    const json base = valid_nightly(dir);
    auto nightly = [&](const std::string &what, const std::function<void(json &)> &edit,
                       const std::string &names) {
        json j = base;
        edit(j);
        out.push_back({"nightly config", what, j.dump(), names});
    };
    out.push_back({"nightly config", "not an object", "[]", "object"});
    out.push_back({"nightly config", "cut short", base.dump().substr(0, 40), "JSON"});
    nightly(
        "a missing field", [](json &j) { j.erase("database"); }, "database");
    nightly(
        "a misspelt top-level field", [](json &j) { j["budgte"] = "1h"; }, "budgte");
    nightly(
        "a field of the wrong type", [](json &j) { j["database"] = 5; }, "database");
    nightly(
        "a budget that is not a duration", [](json &j) { j["budget"] = "forever"; }, "budget");
    nightly(
        "pipelines not an array", [](json &j) { j["pipelines"] = 3; }, "pipelines");
    nightly(
        "no pipelines", [](json &j) { j["pipelines"] = json::array(); }, "pipelines");
    nightly(
        "a misspelt pipeline field", [](json &j) { j["pipelines"][0]["iteratons"] = 3; }, "iteratons");
    nightly(
        "a pipeline with zero samples", [](json &j) { j["pipelines"][0]["samples"] = 0; }, "samples");
    nightly(
        "a pipeline with a negative share", [](json &j) { j["pipelines"][0]["share"] = -1; }, "share");
    nightly(
        "an unknown device", [](json &j) { j["pipelines"][0]["device"] = "tpu"; }, "device");
    nightly(
        "two pipelines of one name", [](json &j) { j["pipelines"].push_back(j["pipelines"][0]); }, "stencil");
    // --weights: the binary file gpusched retrain writes.
    const std::string w = weights_bytes();
    out.push_back({"weights", "empty", "", "truncated"});
    out.push_back({"weights", "cut in half", w.substr(0, w.size() / 2), "truncated"});
    out.push_back({"weights", "the wrong magic number", "NOTWGHTS" + w.substr(8), "magic"});
    std::string newer = w;
    newer[8] = static_cast<char>(0x7f); // the format version, after the magic
    out.push_back({"weights", "a newer format version", newer, "version"});
    out.push_back({"weights", "trailing bytes", w + "extra", "trailing"});
    out.push_back({"weights", "a JSON file", R"({"weights": []})", "weights"});
    return out;
}

std::vector<std::string> command_for(const Case &c, const std::string &path, const test::TempDir &dir) {
    if (c.file == "nightly config") return {"nightly", path};
    std::vector<std::string> a = {"oneshot",      DRIVER_TEST_GENERATORS,
                                  "-g",           "tiny_stencil",
                                  "--samples",    "1",
                                  "--beam-size",  "2",
                                  "--passes",     "1",
                                  "-o",           dir / "out",
                                  "--db",         dir / "db.sqlite",
                                  "--no-validate"};
    a.push_back(c.file == "weights" ? "--weights" : "--search-config");
    a.push_back(path);
    return a;
}

int error_lines(const std::string &text, std::string &first) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line.rfind("info: ", 0) == 0 || line.rfind("warning: ", 0) == 0) continue;
        if (n++ == 0) first = line;
    }
    return n;
}

std::string cell(std::string s) {
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
    return out;
}

} // namespace

TEST_CASE(
    "every malformed search config nightly config and weights file is refused in one line naming it and "
    "leaves no row",
    "[bad-input][malformed]") {
    test::TempDir names; // for the nightly config's own paths
    std::ostringstream table;
    table << "| file | broken how | exit | stderr |\n|---|---|---|---|\n";
    for (const Case &c : cases(names)) {
        test::TempDir dir;
        const std::string path = dir / "the-file";
        std::string content = c.content;
        // The nightly config's folders are this run's own.
        if (c.file == "nightly config") {
            for (std::size_t at; (at = content.find(names.path())) != std::string::npos;)
                content.replace(at, names.path().size(), dir.path());
        }
        test::write_file(path, content);
        const ProcessResult r = test::run_gpusched(command_for(c, path, dir));
        std::string first;
        const int lines = error_lines(r.err, first);
        INFO(c.file << ", " << c.what << ": exit " << r.exit_code << ", stderr:\n" << r.err);
        CHECK(r.term_signal == 0);
        CHECK(r.exit_code == 1);
        CHECK(lines == 1);
        CHECK((first.find(path) != std::string::npos || first.find("the-file") != std::string::npos ||
               first.find(c.names) != std::string::npos));
        CHECK(first.find(c.names) != std::string::npos);
        for (const char *table_name : {"runs", "samples"}) {
            const std::string db = dir / "db.sqlite";
            if (fs::exists(db))
                CHECK(test::sql_int(db, std::string("SELECT count(*) FROM ") + table_name) == 0);
        }
        std::string shown = first;
        for (std::size_t at; (at = shown.find(dir.path())) != std::string::npos;)
            shown.replace(at, dir.path().size(), "DIR");
        table << "| " << c.file << " | " << c.what << " | " << r.exit_code << " | " << cell(shown) << " |\n";
    }
    if (const char *out = std::getenv("GPUSCHED_MALFORMED_TABLE")) std::ofstream(out) << table.str();
}
