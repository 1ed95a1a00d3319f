#pragma once
// What "measured" means, written once. A sample is measured when its
// benchmark finished with a time (status ok, a median) and its output was
// not found wrong. Every query that counts, ranks or trains on measured
// samples uses this condition on a `samples` row named `s`; C++ that holds a
// row uses is_measured() with the same three columns.

#include <optional>
#include <string>

namespace gpusched::db {

inline constexpr const char *kMeasuredSample =
    "(s.status = 'ok' AND s.validation != 'failed' AND s.runtime_median_ms IS NOT NULL)";

inline bool is_measured(const std::string &status, const std::string &validation,
                        const std::optional<double> &runtime_median_ms) {
    return status == "ok" && validation != "failed" && runtime_median_ms.has_value();
}

} // namespace gpusched::db
