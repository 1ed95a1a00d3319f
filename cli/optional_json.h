#pragma once
// An optional value as JSON: the value, or null where it is absent (a
// sample not measured, a run not finished), which is how the --json
// outputs of `tune`, `db` and `nightly` say "none".

#include <optional>

#include <nlohmann/json.hpp>

namespace gpusched::cli {

template <typename T> nlohmann::json opt_json(const std::optional<T> &v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

} // namespace gpusched::cli
