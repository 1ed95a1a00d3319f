#pragma once
// Exports the samples (one row per sample, with its pipeline and run) as CSV
// or JSON for people who analyse a night of tuning elsewhere. Blobs
// (featurizations) are left out; their size is given instead.

#include <cstdint>
#include <optional>
#include <string>

#include "db/database.h"

namespace gpusched::db {

enum class ExportFormat { Csv, Json };

// Throws DbError on database errors.
std::string export_samples(Database &db, ExportFormat format, std::optional<int64_t> run_id = std::nullopt);

} // namespace gpusched::db
