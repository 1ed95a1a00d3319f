#include "test_sql.h"

#include "db/database.h"

namespace gpusched::test {

int64_t sql_int(const std::string &db_path, const std::string &sql) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare(sql);
    return q.step() ? q.column_int(0) : -1;
}

std::string sql_text(const std::string &db_path, const std::string &sql) {
    db::Database database = db::Database::open_existing(db_path);
    auto q = database.prepare(sql);
    return q.step() ? q.column_text(0) : "";
}

std::string stored_sample_keys(const std::string &db_path) {
    return sql_text(db_path, "SELECT group_concat(id || ':' || batch || ':' || idx) FROM "
                             "(SELECT * FROM samples ORDER BY id)");
}

} // namespace gpusched::test
