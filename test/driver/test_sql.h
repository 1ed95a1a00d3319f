#pragma once
// One-value SQL queries on a test's database file, for checking what a real
// gpusched run stored.

#include <cstdint>
#include <string>

namespace gpusched::test {

// The first column of the first row as an integer; -1 when there is no row.
int64_t sql_int(const std::string &db_path, const std::string &sql);
// The first column of the first row as text; empty when there is no row.
std::string sql_text(const std::string &db_path, const std::string &sql);
// Every stored sample as "id:batch:idx", in id order, comma-separated: what a
// resumed run must keep as it was (a prefix of what it ends with).
std::string stored_sample_keys(const std::string &db_path);

} // namespace gpusched::test
