// The bad-input table (issue 29): every option of every command, read from
// the built binary's own --help, given the wrong values of its kind (a count
// of zero, a negative timeout, NaN, a directory where a file goes, a file
// that is not what it should be, a name that is not UTF-8, ...). Each run
// must exit 1 or 2 with one line on stderr naming the option or the value,
// crash nowhere, hang nowhere and leave no row in the database.
//
// An option the --help lists and this file does not classify fails the
// test, so a new option comes with its bad values. With
// GPUSCHED_BAD_INPUT_TABLE=FILE the table of every run is written there as
// Markdown (docs/results/reliability.md shows it).

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "test/catch2_compat.h"

#include "db/database.h"
#include "test_sql.h"
#include "test_support.h"
#include "tuner/subprocess.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

// What an option's value means, which decides its wrong values.
enum class Kind {
    Count,       // an integer, at least 1
    Natural,     // an integer, at least 0
    Seed,        // an unsigned integer
    RunId,       // a run of the database
    Seconds,     // a positive, finite number of seconds
    NonNegative, // a finite number, at least 0
    Positive,    // a positive, finite number
    Probability, // in [0, 0.99]
    Choice,      // one of a few words
    InputFile,   // a file that must exist and be what it should be
    Generator,   // a Halide generator executable
    Database,    // a sample database (created when missing)
    InputDir,    // a directory that must exist and hold what it should
    OutputFile,  // a file to write
    OutputDir,   // a directory to create or fill
    Params,      // generator params, key=value words
    SeedRange,   // N or FIRST:LAST
    Date,        // YYYY-MM-DD[THH:MM[:SS]]
    Duration,    // 90s, 15m, 2h, 1h30m
    Free,        // any text is valid (a name matched later, a Slurm field sbatch checks)
};

// The wrong values of each kind. Braced words are made per run (see
// materialize).
std::vector<std::string> wrong_values(Kind kind) {
    const std::string huge = "99999999999999999999";
    switch (kind) {
    case Kind::Count:
        return {"0", "-3", "abc", huge};
    case Kind::Natural:
        return {"-3", "abc", huge};
    case Kind::Seed:
        return {"-3", "abc", huge};
    case Kind::RunId:
        return {"abc", "-1", "424242"};
    case Kind::Seconds:
        return {"0", "-1", "abc", huge};
    case Kind::NonNegative:
        return {"-1", "abc", "nan", "inf"};
    case Kind::Positive:
        return {"0", "-1", "abc", "nan", "inf"};
    case Kind::Probability:
        return {"-0.5", "1.5", "abc", "nan"};
    case Kind::Choice:
        return {"nonsense", ""};
    case Kind::InputFile:
        return {"{missing}", "{directory}", "{empty}", "{garbage}", "{non-utf8}"};
    case Kind::Generator:
        return {"{missing}", "{directory}", "{empty}", "{garbage}", "{non-utf8}"};
    case Kind::Database:
        return {"{directory}", "{garbage}", "{under-a-file}"};
    case Kind::InputDir:
        return {"{missing}", "{a-file}", "{non-utf8}"};
    case Kind::OutputFile:
        return {"{directory}", "{under-a-file}"};
    case Kind::OutputDir:
        return {"{a-file}", "{under-a-file}"};
    case Kind::Params:
        return {"novalue", "no_such_param=1"};
    case Kind::SeedRange:
        return {"5:2", "a:b", "-1", "1:"};
    case Kind::Date:
        return {"yesterday", "2026-13-45"};
    case Kind::Duration:
        return {"0s", "-5m", "soon", "90x"};
    case Kind::Free:
        return {};
    }
    return {};
}

const char *kind_name(Kind kind) {
    switch (kind) {
    case Kind::Count:
        return "count (>= 1)";
    case Kind::Natural:
        return "integer (>= 0)";
    case Kind::Seed:
        return "seed";
    case Kind::RunId:
        return "run id";
    case Kind::Seconds:
        return "seconds (>= 1)";
    case Kind::NonNegative:
        return "number (>= 0)";
    case Kind::Positive:
        return "number (> 0)";
    case Kind::Probability:
        return "probability";
    case Kind::Choice:
        return "choice";
    case Kind::InputFile:
        return "input file";
    case Kind::Generator:
        return "generator";
    case Kind::Database:
        return "database";
    case Kind::InputDir:
        return "input directory";
    case Kind::OutputFile:
        return "output file";
    case Kind::OutputDir:
        return "output directory";
    case Kind::Params:
        return "generator params";
    case Kind::SeedRange:
        return "seed range";
    case Kind::Date:
        return "date";
    case Kind::Duration:
        return "duration";
    case Kind::Free:
        return "free text";
    }
    return "?";
}

// Every command and the kind of each of its options, by the option's long
// name (or its positional name). Flags take no value and are not listed.
const std::map<std::string, std::map<std::string, Kind>> &option_kinds() {
    // The beam search's options, which One Shot and tune share (cli/search_args.h).
    static const std::map<std::string, Kind> search = {
        {"--beam-size", Kind::Count},  {"--passes", Kind::Count},        {"--seed", Kind::Seed},
        {"--timeout", Kind::Seconds},  {"--dropout", Kind::Probability}, {"--search-config", Kind::InputFile},
        {"--weights", Kind::InputFile}};
    static const std::map<std::string, std::map<std::string, Kind>> kinds = [] {
        std::map<std::string, std::map<std::string, Kind>> k = {
            {"", {{"--log-file", Kind::OutputFile}}},
            {"oneshot",
             {
                 {"generator", Kind::Generator},
                 {"params", Kind::Params},
                 {"--generator-name", Kind::Choice},
                 {"--gpu", Kind::Choice},
                 {"--target", Kind::Choice},
                 {"--autoscheduler", Kind::Choice},
                 {"--output", Kind::OutputDir},
                 {"--db", Kind::Database},
                 {"--samples", Kind::Count},
                 {"--jobs", Kind::Count},
             }},
            {"tune",
             {{"generator", Kind::Generator},
              {"params", Kind::Params},
              {"--generator-name", Kind::Choice},
              {"--mode", Kind::Choice},
              {"--device", Kind::Choice},
              {"--gpu", Kind::Choice},
              {"--output", Kind::OutputDir},
              {"--db", Kind::Database},
              {"--samples", Kind::Count},
              {"--jobs", Kind::Natural}, // 0: every core
              {"--top", Kind::Count},
              {"--baselines", Kind::Choice},
              {"--benchmark-timeout", Kind::Seconds},
              {"--min-time", Kind::NonNegative},
              {"--min-reps", Kind::Count},
              {"--max-reps", Kind::Count},
              {"--precision", Kind::Probability},
              {"--iterations", Kind::Count},
              {"--batch", Kind::Count},
              {"--train-on", Kind::Choice},
              {"--retrain", Kind::Choice},
              {"--epochs", Kind::Count},
              {"--learning-rate", Kind::Positive},
              {"--resume", Kind::RunId},
              {"--time-budget", Kind::Duration},
              {"--max-samples", Kind::Count},
              {"--executor", Kind::Choice},
              // The Slurm fields are sbatch's to check (test/slurm runs them);
              // --work-dir is only read with --executor slurm.
              {"--partition", Kind::Free},
              {"--account", Kind::Free},
              {"--gres", Kind::Free},
              {"--time-limit", Kind::Free},
              {"--work-dir", Kind::Free},
              {"--max-attempts", Kind::Count},
              {"--worker-command", Kind::Free}}},
            {"db", {{"--db", Kind::Database}}},
            {"db runs", {{"--limit", Kind::Count}}},
            {"db best", {}},
            {"db stats", {}},
            {"db samples", {{"run", Kind::RunId}}},
            {"db export",
             {{"--format", Kind::Choice}, {"--run", Kind::RunId}, {"--output", Kind::OutputFile}}},
            {"retrain",
             {{"--db", Kind::Database},
              {"--pipeline", Kind::Free}, // a name with no samples is its own error (test_retrain.cpp)
              {"--weights", Kind::InputFile},
              {"--gpu", Kind::Choice},
              {"--device", Kind::Free},
              {"--epochs", Kind::Count},
              {"--learning-rate", Kind::Positive},
              {"--seed", Kind::Seed},
              {"--output", Kind::OutputFile}}},
            {"nightly", {{"config", Kind::InputFile}}},
            {"gpus", {}},
            {"report",
             {{"--db", Kind::Database},
              {"--run", Kind::RunId},
              {"--pipeline", Kind::Free},
              {"--since", Kind::Date},
              {"--output", Kind::OutputFile},
              {"--gpu", Kind::Choice},
              {"--device",
               Kind::Free}, // a device with no samples is learning's own error (test_learning.cpp)
              {"--jobs", Kind::Natural}}},
            {"learning",
             {{"--db", Kind::Database},
              {"--device", Kind::Free},
              {"--gpu", Kind::Choice},
              {"--weights", Kind::InputFile},
              {"--curve", Kind::Count},
              {"--epochs", Kind::Count},
              {"--learning-rate", Kind::Positive},
              {"--anchor", Kind::NonNegative},
              {"--seed", Kind::Seed},
              {"--jobs", Kind::Natural}}},
            {"bench",
             {{"--suite", Kind::InputFile},
              {"--build-dir", Kind::InputDir},
              {"--apps", Kind::Choice},
              {"--sources", Kind::Choice},
              {"--gpu", Kind::Choice},
              {"--samples", Kind::Count},
              {"--jobs", Kind::Count},
              {"--timeout", Kind::Seconds},
              {"--work-dir", Kind::OutputDir},
              {"--db", Kind::Database},
              {"--output", Kind::OutputFile}}},
            {"fuzz",
             {{"params", Kind::Params},
              {"--seeds", Kind::SeedRange},
              {"--generator", Kind::Generator},
              {"--build-dir", Kind::InputDir},
              {"--samples", Kind::Count},
              {"--beam-size", Kind::Count},
              {"--passes", Kind::Count},
              {"--gpu", Kind::Choice},
              {"--jobs", Kind::Count},
              {"--timeout", Kind::Seconds},
              {"--work-dir", Kind::OutputDir},
              {"--db", Kind::Database},
              {"--output", Kind::OutputFile}}},
            {"worker", {{"scope", Kind::InputDir}, {"--array", Kind::Natural}, {"--index", Kind::Natural}}},
        };
        for (const char *command : {"oneshot", "tune"})
            k[command].insert(search.begin(), search.end());
        return k;
    }();
    return kinds;
}

std::vector<std::string> words(const std::string &line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

// One command's --help, read as CLI11 writes it (2.3's "Options:" and 2.4's
// "OPTIONS:" with aligned short names alike): its value-taking options and
// positionals by long name, and its subcommands.
struct HelpText {
    std::set<std::string> valued;
    std::set<std::string> subcommands;
};

HelpText read_help(const std::string &text) {
    static const std::regex type_word("^(INT|UINT|FLOAT|TEXT|NUMBER|FILE|DIR|PATH)\\b.*");
    HelpText help;
    std::string section;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        if (line[0] != ' ') {
            std::string head = line.substr(0, line.find(':'));
            for (auto &c : head)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            section = line.back() == ':' ? head : "";
            continue;
        }
        // A description continued on its own line starts far to the right.
        if (line.find_first_not_of(' ') > 8) continue;
        const auto w = words(line);
        if (w.empty()) continue;
        if (section == "subcommands") {
            help.subcommands.insert(w[0]);
        } else if (section == "positionals") {
            if (w.size() > 1 && std::regex_match(w[1], type_word)) help.valued.insert(w[0]);
        } else if (section == "options") {
            std::string name;
            std::size_t i = 0;
            for (; i < w.size() && w[i][0] == '-'; ++i) {
                std::string n = w[i];
                if (n.back() == ',') n.pop_back();
                // "-h,--help" in one word, or "-h," then "--help".
                const auto comma = n.rfind(',');
                if (comma != std::string::npos) n = n.substr(comma + 1);
                if (name.empty() || n.rfind("--", 0) == 0) name = n;
            }
            if (!name.empty() && i < w.size() && std::regex_match(w[i], type_word)) help.valued.insert(name);
        }
    }
    return help;
}

ProcessResult run(const std::vector<std::string> &args, std::chrono::seconds timeout) {
    ProcessSpec spec;
    spec.argv = {GPUSCHED_BINARY};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout = timeout;
    // The default database of a command without --db stays inside the run.
    return run_process(spec);
}

std::vector<std::string> split_command(const std::string &command) {
    return words(command);
}

// A wrong value made real in the run's own folder.
std::string materialize(const std::string &value, const test::TempDir &dir) {
    if (value == "{missing}") return dir / "no-such-file";
    if (value == "{directory}") {
        fs::create_directories(dir / "a-directory");
        return dir / "a-directory";
    }
    if (value == "{empty}") {
        test::write_file(dir / "empty-file", "");
        return dir / "empty-file";
    }
    if (value == "{garbage}") {
        test::write_file(dir / "garbage-file", "this is not what it should be \x01\x02\x03\n");
        fs::permissions(dir / "garbage-file", fs::perms::owner_all);
        return dir / "garbage-file";
    }
    if (value == "{non-utf8}") return dir / "name-\xff\xfe-not-utf8";
    if (value == "{a-file}") {
        test::write_file(dir / "a-file", "a file\n");
        return dir / "a-file";
    }
    if (value == "{under-a-file}") {
        test::write_file(dir / "a-file", "a file\n");
        return dir / "a-file/below";
    }
    return value;
}

// The command line of one run: the command's own valid context, with the
// option (or positional) given the value. A context that did real work
// would take seconds to minutes: each is the cheapest one that gets as far
// as reading every option.
std::vector<std::string> command_line(const std::string &command, const std::string &option,
                                      const std::string &value, const test::TempDir &dir) {
    const std::string db = dir / "db.sqlite";
    std::map<std::string, std::string> positional;
    std::vector<std::string> before, after;
    if (command.empty()) {
        after = {"gpus"};
    } else if (command == "oneshot") {
        positional = {{"generator", DEMO_GENERATOR}, {"params", ""}};
        after = {"-g", "demo_sharpen", "-o", dir / "out", "--db", db, "--samples", "1", "--no-validate"};
    } else if (command == "tune") {
        // Autotune's own options are refused in Top 5 whatever their value:
        // they are tried in Autotune.
        static const std::set<std::string> autotune_only = {
            "--iterations",    "--batch",  "--train-on",    "--retrain",    "--epochs",
            "--learning-rate", "--resume", "--time-budget", "--max-samples"};
        const bool autotune = autotune_only.count(option) > 0;
        positional = {{"generator", DEMO_GENERATOR}, {"params", ""}};
        after = {"-g",        "demo_sharpen",
                 "--device",  "opencl",
                 "--gpu",     "h100",
                 "--mode",    autotune ? "autotune" : "top5",
                 "--samples", "2",
                 "-o",        dir / "out",
                 "--db",      db};
        if (!autotune) after.insert(after.end(), {"--top", "1"});
        // A resume takes the run's own GPU and batch size: given, they are refused (cmd_tune.cpp).
        if (option == "--resume")
            after = {"--device", "opencl", "--mode", "autotune", "-o", dir / "out", "--db", db};
    } else if (command.rfind("db", 0) == 0) {
        db::Database::open(db); // an empty database, as a new user's
        before = {"db", "--db", db};
        if (command == "db") {
            after = {"runs"};
        } else {
            before.push_back(split_command(command)[1]);
            if (command == "db samples") positional = {{"run", "1"}};
        }
    } else if (command == "retrain") {
        db::Database::open(db);
        after = {"--db", db, "--all", "-o", dir / "weights.bin"};
    } else if (command == "nightly") {
        positional = {{"config", ""}};
    } else if (command == "report") {
        db::Database::open(db);
        after = {"--db", db, "-o", dir / "report.html"};
    } else if (command == "learning") {
        db::Database::open(db);
        after = {"--db", db};
    } else if (command == "bench") {
        after = {"--suite",     GPUSCHED_SOURCE_DIR "/benchmarks/suite.json",
                 "--build-dir", GPUSCHED_BUILD_DIR,
                 "--apps",      "harris",
                 "--sources",   "naive",
                 "--work-dir",  dir / "bench",
                 "--db",        db};
    } else if (command == "fuzz") {
        positional = {{"params", ""}};
        after = {"--seeds",   "0", "--build-dir", GPUSCHED_BUILD_DIR, "--work-dir", dir / "fuzz", "--db", db,
                 "--samples", "1"};
    } else if (command == "worker") {
        fs::create_directories(dir / "scope");
        positional = {{"scope", dir / "scope"}};
        after = {"--array", "0", "--index", "0"};
    }
    // The option replaces the context's own value of it.
    std::vector<std::string> args;
    if (command.empty()) args = {option, value};
    if (!command.empty() && command.rfind("db", 0) != 0) args.push_back(command);
    args.insert(args.end(), before.begin(), before.end());
    if (command == "db" && option == "--db") args = {"db", "--db", value};
    for (std::size_t i = 0; i < after.size(); ++i) {
        const bool same = after[i] == option || (option == "--generator-name" && after[i] == "-g") ||
                          (option == "--output" && after[i] == "-o");
        if (same) {
            ++i; // and its value
            continue;
        }
        args.push_back(after[i]);
    }
    const bool is_positional = positional.count(option) > 0;
    if (!command.empty() && !is_positional && !(command == "db" && option == "--db")) {
        args.push_back(option);
        args.push_back(value);
    }
    // Positionals go last, in order (generator before params).
    for (const char *name : {"generator", "config", "scope", "run", "params"}) {
        auto it = positional.find(name);
        if (it == positional.end()) continue;
        const std::string v = option == name ? value : it->second;
        if (!v.empty() || option == name) args.push_back(v);
    }
    return args;
}

struct Row {
    std::string command, option, value_shown;
    Kind kind;
    ProcessResult result;
    std::string verdict; // empty: as it should be
};

// The lines of stderr that are not progress ("info: ", "warning: "), and
// the first of them.
int error_lines(const std::string &text) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);)
        n += !line.empty() && line.rfind("info: ", 0) != 0 && line.rfind("warning: ", 0) != 0;
    return n;
}

std::string error_line(const std::string &text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line.rfind("info: ", 0) != 0 && line.rfind("warning: ", 0) != 0) return line;
    return "";
}

// What is wrong with a run, or empty.
std::string judge(const Row &row, const std::string &value, const std::string &db) {
    const ProcessResult &r = row.result;
    if (!r.started) return "did not start: " + r.start_error;
    if (r.timed_out) return "accepted: still running at the timeout";
    if (r.term_signal != 0) return "crashed with signal " + std::to_string(r.term_signal);
    if (r.exit_code == 0) return "accepted: exit 0";
    if (r.exit_code != 1 && r.exit_code != 2) return "exit " + std::to_string(r.exit_code) + " (not 1 or 2)";
    // Progress lines of the work done before the error (a generator param is
    // only read by the generator) may come first; the error is one line.
    const std::string error = error_line(r.err);
    if (error_lines(r.err) != 1) return std::to_string(error_lines(r.err)) + " error lines on stderr, not 1";
    const std::string bare = row.option.substr(row.option.find_first_not_of('-'));
    const bool names_option = error.find(bare) != std::string::npos;
    // A generator param is named by its key.
    const std::string key = row.kind == Kind::Params ? value.substr(0, value.find('=')) : value;
    const bool names_value = key.size() >= 3 && error.find(key) != std::string::npos;
    if (!names_option && !names_value) return "the line names neither the option nor the value";
    if (fs::exists(db)) {
        try {
            if (test::sql_int(db, "SELECT count(*) FROM runs") > 0 ||
                test::sql_int(db, "SELECT count(*) FROM samples") > 0)
                return "left rows in the database";
        } catch (const std::exception &e) {
            return std::string("left the database unreadable: ") + e.what();
        }
    }
    return "";
}

std::string markdown_cell(std::string text) {
    std::string out;
    for (char c : text) {
        if (c == '|')
            out += "\\|";
        else if (c == '\n')
            out += ' ';
        else if (static_cast<unsigned char>(c) >= 0x80)
            out += "?"; // the non-UTF-8 names
        else
            out += c;
    }
    return out;
}

void write_table(const std::vector<Row> &rows,
                 const std::map<std::string, std::vector<std::string>> &free_options,
                 const std::string &path) {
    std::ofstream out(path);
    out << "# Bad input: every option of every command\n\n"
        << "Written by test/driver/test_bad_input_table.cpp (`GPUSCHED_BAD_INPUT_TABLE=FILE "
           "build/test/driver/test_driver \"[bad-input-table]\"`): each option from the binary's `--help`, "
           "given the wrong values of its kind; every run must exit 1 or 2 with one error line naming the "
           "option or the value, and leave no row in the database. "
        << rows.size()
        << " runs; a bold cell is a run that broke the rule. Braced values are made per run "
           "(a missing file, a directory, an empty file, garbage, a name that is not UTF-8, a path under a "
           "regular file); DIR is the run's temporary folder.\n\n";
    out << "| command | option | kind | wrong value | exit | stderr |\n|---|---|---|---|---|---|\n";
    for (const Row &row : rows) {
        std::string line = row.verdict.empty() ? error_line(row.result.err) : "**" + row.verdict + "**";
        // The run's temporary folder differs every time: keep the table stable.
        line = std::regex_replace(line, std::regex("/[^ ]*/(gpusched-test|tmp)[^/ ]*"), "DIR");
        out << "| " << (row.command.empty() ? "(global)" : row.command) << " | `" << row.option << "` | "
            << kind_name(row.kind) << " | `" << markdown_cell(row.value_shown) << "` | "
            << (row.result.timed_out ? std::string("timeout") : std::to_string(row.result.exit_code)) << " | "
            << markdown_cell(line) << " |\n";
    }
    out << "\nOptions any text is valid for (no wrong value to give): ";
    bool first = true;
    for (const auto &[command, options] : free_options)
        for (const auto &o : options) {
            out << (first ? "" : ", ") << command << " `" << o << "`";
            first = false;
        }
    out << ".\n";
}

} // namespace

TEST_CASE("every option of every command given a wrong value exits 1 or 2 with one line naming it and leaves "
          "no row",
          "[bad-input][bad-input-table]") {
    const auto &kinds = option_kinds();

    // Every command and option the binary has must be classified here.
    std::set<std::string> commands_seen;
    std::vector<std::string> to_read = {""};
    while (!to_read.empty()) {
        const std::string command = to_read.back();
        to_read.pop_back();
        commands_seen.insert(command);
        auto args = split_command(command);
        args.push_back("--help");
        const ProcessResult r = run(args, std::chrono::seconds(30));
        REQUIRE(r.exit_code == 0);
        const HelpText help = read_help(r.out);
        INFO("command: '" << command << "'");
        REQUIRE(kinds.count(command) == 1);
        const auto &known = kinds.at(command);
        for (const auto &name : help.valued) {
            INFO("option " << name << " of '" << command << "' has no kind in test_bad_input_table.cpp");
            CHECK(known.count(name) == 1);
        }
        for (const auto &[name, kind] : known) {
            INFO("option " << name << " is classified but '" << command << " --help' does not list it");
            CHECK(help.valued.count(name) == 1);
        }
        for (const auto &sub : help.subcommands)
            to_read.push_back(command.empty() ? sub : command + " " + sub);
    }
    CHECK(commands_seen.size() == kinds.size());

    std::vector<Row> rows;
    std::map<std::string, std::vector<std::string>> free_options;
    for (const auto &[command, options] : kinds) {
        for (const auto &[option, kind] : options) {
            if (kind == Kind::Free) free_options[command].push_back(option);
            for (const std::string &wrong : wrong_values(kind)) {
                test::TempDir dir;
                const std::string value = materialize(wrong, dir);
                Row row{command, option, wrong, kind, {}, {}};
                const auto args = command_line(command, option, value, dir);
                row.result = run(args, std::chrono::seconds(60));
                row.verdict = judge(row, value, dir / "db.sqlite");
                std::string shown;
                for (const auto &a : args)
                    shown += a + " ";
                INFO("gpusched " << shown << "\n-> exit " << row.result.exit_code << ", stderr:\n"
                                 << row.result.err);
                CHECK(row.verdict == "");
                rows.push_back(std::move(row));
            }
        }
    }
    CHECK(rows.size() > 150);
    if (const char *path = std::getenv("GPUSCHED_BAD_INPUT_TABLE")) write_table(rows, free_options, path);
}
