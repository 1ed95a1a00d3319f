#pragma once
// The schema's history. Migration N takes a database at user_version N-1 to
// N; they run in order inside one transaction each and are never edited once
// released: a schema change is a new migration. docs/db-schema.md describes
// the resulting tables.

#include <string>
#include <vector>

namespace gpusched::db {

struct Migration {
    int version;
    const char *description;
    const char *sql;
};

const std::vector<Migration> &migrations();

// The version the newest migration produces.
int current_schema_version();

} // namespace gpusched::db
