#include "db/database.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <sqlite3.h>
#include <sys/statvfs.h>

#include "db/migrations.h"

namespace gpusched::db {
namespace fs = std::filesystem;

namespace {

constexpr int kDefaultBusyTimeoutMs = 30000; // a nightly job may hold the write lock for a while

// How long a writer waits for another process's write lock:
// $GPUSCHED_DB_BUSY_TIMEOUT_MS, else 30 s.
int busy_timeout_ms() {
    static const int ms = [] {
        const char *env = std::getenv("GPUSCHED_DB_BUSY_TIMEOUT_MS");
        const int v = env && *env ? std::atoi(env) : 0;
        return v > 0 ? v : kDefaultBusyTimeoutMs;
    }();
    return ms;
}

// What the operating system said under SQLite's words, where it explains
// them: "disk I/O error" is a full disk more often than a broken one.
std::string system_cause(sqlite3 *db) {
    switch (db ? sqlite3_system_errno(db) : 0) {
    case ENOSPC:
        return " (no space left on the disk that holds it)";
    case EROFS:
        return " (its file system is read-only)";
    case EACCES:
        return " (permission denied)";
    default:
        return "";
    }
}

[[noreturn]] void fail(sqlite3 *db, const std::string &what) {
    throw DbError(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory") + system_cause(db));
}

// Whether the file system that holds (or would hold) `path` is mounted
// read-only: SQLite cannot then keep the WAL index beside it, so even a
// read needs the file opened as immutable.
bool on_read_only_file_system(const std::string &path) {
    fs::path folder = fs::absolute(path).parent_path();
    std::error_code ec;
    while (!folder.empty() && !fs::exists(folder, ec) && folder != folder.parent_path())
        folder = folder.parent_path();
    struct statvfs st {};
    return statvfs(folder.c_str(), &st) == 0 && (st.f_flag & ST_RDONLY);
}

// SQLite's URI for a file name: the characters URIs give a meaning to,
// percent-encoded.
std::string file_uri(const std::string &path) {
    std::string uri = "file:";
    for (char c : fs::absolute(path).string()) {
        if (c == '%' || c == '?' || c == '#') {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
            uri += hex;
        } else {
            uri += c;
        }
    }
    return uri;
}

// A non-empty file that does not start with SQLite's header is refused before
// SQLite ever writes to it.
void check_is_sqlite_file(const std::string &path) {
    std::error_code ec;
    if (!fs::exists(path, ec) || fs::file_size(path, ec) == 0) return;
    std::ifstream f(path, std::ios::binary);
    char header[16] = {};
    f.read(header, sizeof header);
    if (f.gcount() < 16 || std::string(header, 15) != "SQLite format 3") {
        throw DbError("'" + path +
                      "' is not a SQLite database (wrong file header); "
                      "choose another --db path or move the file away");
    }
}

// --- Result columns by name ----------------------------------------------------

// Marks a name that two result columns share: reading it would have to
// guess which one is meant.
constexpr int kAmbiguousColumn = -1;

std::vector<std::string> result_column_names(sqlite3_stmt *st) {
    std::vector<std::string> names;
    for (int col = 0; col < sqlite3_column_count(st); ++col) {
        const char *name = sqlite3_column_name(st, col); // null only when out of memory
        names.emplace_back(name ? name : "");
    }
    return names;
}

std::unordered_map<std::string, int> result_column_positions(sqlite3_stmt *st) {
    std::unordered_map<std::string, int> positions;
    const std::vector<std::string> names = result_column_names(st);
    for (int col = 0; col < static_cast<int>(names.size()); ++col) {
        const auto [it, first] = positions.emplace(names[col], col);
        if (!first) it->second = kAmbiguousColumn;
    }
    return positions;
}

// The SQL on one line, for an error message.
std::string one_line(const std::string &sql) {
    std::string out;
    bool in_space = false;
    for (char c : sql) {
        const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
        if (space && !in_space && !out.empty()) out += ' ';
        if (!space) out += c;
        in_space = space;
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::string joined(const std::vector<std::string> &names) {
    std::string out;
    for (const auto &n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

// The position of result column `name` in `positions` (built from `st`);
// a name the query does not return, or returns twice, is a programming
// error in the query or its reader, and names both.
int position_of(const std::unordered_map<std::string, int> &positions, const std::string &name,
                sqlite3_stmt *st, const std::string &sql) {
    const auto it = positions.find(name);
    if (it != positions.end() && it->second != kAmbiguousColumn) return it->second;
    const std::string problem =
        it == positions.end() ? "is not a result column of" : "names more than one result column of";
    throw DbError("column '" + name + "' " + problem +
                  " the query (its columns: " + joined(result_column_names(st)) + "): " + one_line(sql));
}

using StatementHandle = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)>;

// The integer in result column `column` of the first row of `sql` (0 if
// there is no row).
int query_int(sqlite3 *db, const std::string &sql, const std::string &column, const std::string &path) {
    sqlite3_stmt *raw = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
        fail(db, "cannot read database '" + path + "'");
    const StatementHandle st(raw, sqlite3_finalize);
    const int col = position_of(result_column_positions(raw), column, raw, sql);
    const int rc = sqlite3_step(raw);
    if (rc == SQLITE_ROW) return sqlite3_column_int(raw, col);
    if (rc != SQLITE_DONE) fail(db, "cannot read database '" + path + "'");
    return 0;
}

} // namespace

// --- Statement ---------------------------------------------------------------

Statement::Statement(sqlite3 *db, const std::string &sql) : db_(db), sql_(sql) {
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
        fail(db_, "SQL error in '" + sql.substr(0, 60) + "'");
}
Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

Statement &Statement::bind(int i, int64_t v) {
    if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
    return *this;
}
Statement &Statement::bind(int i, double v) {
    if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
    return *this;
}
Statement &Statement::bind(int i, const std::string &v) {
    if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        fail(db_, "bind");
    return *this;
}
Statement &Statement::bind_blob(int i, const std::vector<uint8_t> &v) {
    if (sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        fail(db_, "bind");
    return *this;
}
Statement &Statement::bind_null(int i) {
    if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail(db_, "bind");
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "SQL error in '" + sql_.substr(0, 60) + "'");
}
void Statement::run() {
    while (step()) {
    }
}

bool Statement::is_null(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
int64_t Statement::column_int(int col) const {
    return sqlite3_column_int64(stmt_, col);
}
double Statement::column_double(int col) const {
    return sqlite3_column_double(stmt_, col);
}
std::string Statement::column_text(int col) const {
    const unsigned char *t = sqlite3_column_text(stmt_, col);
    return t ? std::string(reinterpret_cast<const char *>(t), sqlite3_column_bytes(stmt_, col))
             : std::string();
}

int Statement::column_index(const std::string &name) const {
    if (!column_positions_) column_positions_ = result_column_positions(stmt_);
    return position_of(*column_positions_, name, stmt_, sql_);
}
std::vector<std::string> Statement::column_names() const {
    return result_column_names(stmt_);
}
bool Statement::is_null(const std::string &name) const {
    return is_null(column_index(name));
}
int64_t Statement::integer(const std::string &name) const {
    return column_int(column_index(name));
}
double Statement::real(const std::string &name) const {
    return column_double(column_index(name));
}
std::string Statement::text(const std::string &name) const {
    return column_text(column_index(name));
}
std::vector<uint8_t> Statement::blob(const std::string &name) const {
    const int col = column_index(name);
    const auto *p = static_cast<const uint8_t *>(sqlite3_column_blob(stmt_, col));
    return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(stmt_, col)) : std::vector<uint8_t>();
}
std::optional<int64_t> Statement::optional_integer(const std::string &name) const {
    const int col = column_index(name);
    if (is_null(col)) return std::nullopt;
    return column_int(col);
}
std::optional<double> Statement::optional_real(const std::string &name) const {
    const int col = column_index(name);
    if (is_null(col)) return std::nullopt;
    return column_double(col);
}
std::optional<std::string> Statement::optional_text(const std::string &name) const {
    const int col = column_index(name);
    if (is_null(col)) return std::nullopt;
    return column_text(col);
}

// --- Database ----------------------------------------------------------------

Database::Database(sqlite3 *db, std::string path) : db_(db), path_(std::move(path)) {}
Database::Database(Database &&o) noexcept : db_(o.db_), path_(std::move(o.path_)) {
    o.db_ = nullptr;
}
Database &Database::operator=(Database &&o) noexcept {
    if (this != &o) {
        sqlite3_close_v2(db_);
        db_ = o.db_;
        path_ = std::move(o.path_);
        o.db_ = nullptr;
    }
    return *this;
}
Database::~Database() {
    sqlite3_close_v2(db_);
}

// Opens the file with SQLite and the busy timeout; no checks of its content.
Database Database::open_file(const std::string &path, int flags) {
    check_is_sqlite_file(path);
    sqlite3 *raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
        sqlite3_close_v2(raw);
        throw DbError("cannot open database '" + path + "': " + msg);
    }
    sqlite3_busy_timeout(raw, busy_timeout_ms());
    return Database(raw, path);
}

namespace {
void refuse_newer_schema(const std::string &path, int version) {
    if (version > current_schema_version()) {
        throw DbError("database '" + path + "' has schema version " + std::to_string(version) +
                      ", newer than this gpusched supports (" + std::to_string(current_schema_version()) +
                      "); use a newer gpusched");
    }
}
} // namespace

Database Database::open(const std::string &path) {
    if (on_read_only_file_system(path))
        throw DbError("database '" + path +
                      "' is on a read-only file system: nothing can be stored in it "
                      "(gpusched db and gpusched report can still read it)");
    fs::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec) throw DbError("cannot create directory for database '" + path + "': " + ec.message());
    }
    Database db = open_file(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    // SQLite opens a file it may not write read-only without a word, and
    // the first INSERT fails after the work (issue 57); in WAL mode it also
    // creates its -wal and -shm files beside the database.
    const std::string folder = p.has_parent_path() ? p.parent_path().string() : ".";
    if (sqlite3_db_readonly(db.db_, "main") == 1)
        throw DbError("database '" + path +
                      "' is read-only to this user: nothing can be stored in it (gpusched db and gpusched "
                      "report can still read it); choose another --db path or make the file writable");
    if (::access(folder.c_str(), W_OK) != 0 && !fs::exists(path + "-wal"))
        throw DbError("database '" + path + "': its folder '" + folder +
                      "' is not writable by this user, and SQLite keeps its journal there; choose another "
                      "--db path or make the folder writable");
    // One read transaction, so the three reads see the same snapshot even
    // while another process is creating the schema.
    int app_id = 0, version = 0, tables = 0;
    db.transaction(
        [&] {
            app_id = query_int(db.db_, "PRAGMA application_id", "application_id", path);
            version = query_int(db.db_, "PRAGMA user_version", "user_version", path);
            tables = query_int(db.db_, "SELECT count(*) AS tables FROM sqlite_master", "tables", path);
        },
        Access::Read);
    if (app_id != kApplicationId && (app_id != 0 || tables > 0)) {
        throw DbError("'" + path + "' is a SQLite database of another application, not a gpusched database");
    }
    refuse_newer_schema(path, version);
    // Switching to WAL takes an exclusive lock, and when that conflicts with
    // another process opening the same file SQLite reports "database is
    // locked" at once instead of waiting out the busy timeout (waiting could
    // deadlock); so retry for as long as the busy timeout would wait.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms());
    for (;;) {
        const int rc = sqlite3_exec(db.db_, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK) break;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline)
            throw DbError("cannot switch database '" + path + "' to WAL mode: " + sqlite3_errmsg(db.db_));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    db.exec("PRAGMA foreign_keys = ON");
    if (version < current_schema_version()) {
        // All pending migrations in one write transaction, deciding what is
        // pending from the version read under its lock: processes started
        // together on a new file (nightly jobs) would otherwise all see
        // version 0 above and the later ones fail creating the tables.
        db.transaction([&] {
            const int locked_version = query_int(db.db_, "PRAGMA user_version", "user_version", path);
            refuse_newer_schema(path, locked_version);
            for (const auto &m : migrations()) {
                if (m.version <= locked_version) continue;
                db.exec(m.sql);
                db.exec("PRAGMA user_version = " + std::to_string(m.version));
                db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
            }
        });
    }
    return db;
}

Database Database::open_existing(const std::string &path) {
    if (!fs::exists(path)) throw DbError("database '" + path + "' does not exist");
    if (!on_read_only_file_system(path)) return open(path);
    // Read-only media (a published copy, a snapshot): nothing may change it,
    // not even the WAL index, so SQLite reads it as immutable.
    Database db = open_file(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
    db.path_ = path;
    const int app_id = query_int(db.db_, "PRAGMA application_id", "application_id", path);
    const int version = query_int(db.db_, "PRAGMA user_version", "user_version", path);
    if (app_id != kApplicationId)
        throw DbError("'" + path + "' is not a gpusched database (or an empty one)");
    refuse_newer_schema(path, version);
    if (version < current_schema_version())
        throw DbError("database '" + path + "' has schema version " + std::to_string(version) +
                      ", older than this "
                      "gpusched's (" +
                      std::to_string(current_schema_version()) +
                      "), and is on a read-only file "
                      "system: open it once where it can be written to upgrade it");
    return db;
}

int Database::schema_version() const {
    return query_int(db_, "PRAGMA user_version", "user_version", path_);
}

void Database::exec(const std::string &sql) {
    char *err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(db_);
        sqlite3_free(err);
        if (rc == SQLITE_BUSY) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.3g", busy_timeout_ms() / 1000.0);
            throw DbError("database '" + path_ +
                          "' stayed locked by another process for longer than the busy "
                          "timeout (" +
                          seconds + " s); try again when it is free");
        }
        throw DbError("database '" + path_ + "': " + msg + system_cause(db_));
    }
}

int64_t Database::last_insert_id() const {
    return sqlite3_last_insert_rowid(db_);
}

void Database::transaction(const std::function<void()> &fn, Access access) {
    // Nested calls join the outer transaction: a run is written atomically
    // together with its samples, each of which is atomic on its own.
    if (!sqlite3_get_autocommit(db_)) {
        fn();
        return;
    }
    exec(access == Access::Write ? "BEGIN IMMEDIATE" : "BEGIN");
    try {
        fn();
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

std::string default_database_path() {
    if (const char *xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        return std::string(xdg) + "/gpusched/samples.sqlite";
    if (const char *home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.local/share/gpusched/samples.sqlite";
    return "gpusched-samples.sqlite";
}

} // namespace gpusched::db
