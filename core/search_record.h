#pragma once
// The search record: the JSON file the plugin writes at config.record_path
// (docs/search.md). It holds the decisions (replayable: config "replay"
// applies exactly them), the predicted cost in total and per stage, and the
// search statistics.
//
// Invariant: decisions_from_record(record_to_json(...)) == the decisions, for
// the same pipeline; a record for another pipeline is a UserError naming the
// Func that does not match.

#include <string>

#include <nlohmann/json.hpp>

#include "core/beam_search.h"
#include "core/function_dag.h"
#include "core/reduction_split.h"

namespace gpusched {

nlohmann::json decisions_to_json(const FunctionDAG &dag, const Decisions &d);
Decisions decisions_from_json(const FunctionDAG &dag, const nlohmann::json &j);

nlohmann::json record_to_json(const FunctionDAG &dag, const SearchResult &r,
                              const nlohmann::json &config_echo, bool replayed, double peak_rss_mb);
// Reads a record file and returns its decisions.
Decisions read_record_decisions(const FunctionDAG &dag, const std::string &path);
// Reads a record file's reduction splits (core/reduction_split.h; none in
// records written before splits existed), to apply before building the DAG
// its decisions are for.
std::vector<ReductionSplit> read_record_reduction_splits(const std::string &path);

} // namespace gpusched
