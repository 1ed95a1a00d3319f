#pragma once
// A SQLite connection opened the way gpusched needs it: WAL journal, a busy
// timeout (nightly jobs and people querying share one file), foreign keys on,
// and the schema brought up to date by the numbered migrations in
// migrations.cpp. Knows nothing of Halide.
//
// Invariants: an open Database is at kCurrentSchemaVersion; a file written by
// a newer gpusched, a file that is not SQLite, or a SQLite file that belongs
// to another application is refused with DbError, never modified.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace gpusched::db {

class DbError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// 'GPUS' in PRAGMA application_id marks a gpusched database.
inline constexpr int32_t kApplicationId = 0x47505553;

// A prepared statement; bind with 1-based indices like SQLite.
//
// Read a row's values by column name (integer("id"), optional_real("best_ms")):
// the name is looked up, exactly as the query spells it, among the query's
// result columns, so a column that moves in the SELECT list is still read
// right, and one that is not there (or appears twice) is a DbError naming it
// and the query, never a silent misread of its neighbour. A plain column is
// named as in its table, without the table's alias; an expression needs a
// name: give it one with AS.
class Statement {
public:
    Statement(sqlite3 *db, const std::string &sql);
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    Statement &bind(int i, int64_t v);
    Statement &bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
    Statement &bind(int i, double v);
    Statement &bind(int i, const std::string &v);
    Statement &bind(int i, const char *v) { return bind(i, std::string(v)); }
    Statement &bind_blob(int i, const std::vector<uint8_t> &v);
    Statement &bind_null(int i);
    template <typename T> Statement &bind(int i, const std::optional<T> &v) {
        return v ? bind(i, *v) : bind_null(i);
    }

    // Advances; true while a row is available.
    bool step();
    // Runs a statement that returns no rows.
    void run();

    // Reads by result column name; see above.
    bool is_null(const std::string &name) const;
    int64_t integer(const std::string &name) const;
    double real(const std::string &name) const;
    std::string text(const std::string &name) const;
    std::vector<uint8_t> blob(const std::string &name) const;
    std::optional<int64_t> optional_integer(const std::string &name) const;
    std::optional<double> optional_real(const std::string &name) const;
    std::optional<std::string> optional_text(const std::string &name) const;
    // The result columns' names, in the order the query returns them.
    std::vector<std::string> column_names() const;

    // Reads by 0-based position, kept for tests' ad-hoc queries; gpusched's
    // own queries read by name.
    bool is_null(int col) const;
    int64_t column_int(int col) const;
    double column_double(int col) const;
    std::string column_text(int col) const;

private:
    // The position of result column `name`; throws DbError if the query
    // returns no column, or more than one, of that name.
    int column_index(const std::string &name) const;

    sqlite3 *db_;
    sqlite3_stmt *stmt_ = nullptr;
    std::string sql_;
    // Result column name -> position, built on the first read by name; a
    // name that occurs twice maps to kAmbiguousColumn.
    mutable std::optional<std::unordered_map<std::string, int>> column_positions_;
};

class Database {
public:
    // Opens (creating if needed, with its parent directory) and migrates.
    // Throws DbError naming the path and the problem.
    static Database open(const std::string &path);
    // Opens a database that must already exist (for queries); migrates it.
    static Database open_existing(const std::string &path);

    Database(Database &&) noexcept;
    Database &operator=(Database &&) noexcept;
    ~Database();

    const std::string &path() const { return path_; }
    int schema_version() const;

    void exec(const std::string &sql);
    Statement prepare(const std::string &sql) { return Statement(db_, sql); }
    int64_t last_insert_id() const;

    // Runs fn inside BEGIN IMMEDIATE ... COMMIT (a write transaction; read:
    // a plain BEGIN, one consistent snapshot); rolls back if it throws.
    enum class Access { Write, Read };
    void transaction(const std::function<void()> &fn, Access access = Access::Write);

private:
    Database(sqlite3 *db, std::string path);
    static Database open_file(const std::string &path, int sqlite_flags);
    sqlite3 *db_ = nullptr;
    std::string path_;
};

// The default database location: $XDG_DATA_HOME/gpusched/samples.sqlite, or
// ~/.local/share/gpusched/samples.sqlite.
std::string default_database_path();

} // namespace gpusched::db
