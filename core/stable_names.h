#pragma once
// Stable Func names: how records, schedule sources and reports name the
// Funcs of a pipeline, identically in every process and every copy of it.
//
// Halide's names are stable except for the intermediates rfactor creates
// (core/reduction_split.h): it names them after the Func with a counter that
// makes them unique ("out_intm$7"), and the counter differs between copies of
// a pipeline and between processes. The counter grows with every
// intermediate of a Func, so within one pipeline it orders them by creation:
// the first intermediate of `out` is "out_intm", the second (a split of the
// first split's combining loop) "out_intm2", and so on
// (ReductionSplit::intermediate() names them the same way). A Func whose
// own name has a counter ("sum$1", a name used twice) keeps it in its
// intermediates' stable names ("sum$1_intm"), although Halide writes its
// later ones "sum_1_intm$4".

#include <map>
#include <string>
#include <vector>

namespace gpusched {

// The stable name of each of a pipeline's Funcs, given all of their Halide
// names (every intermediate of a Func must be among them, or the later ones
// are numbered as if the earlier did not exist).
std::map<std::string, std::string> stable_func_names(const std::vector<std::string> &halide_names);

// The same for an environment, its Funcs by Halide name
// (Halide::Internal::build_environment).
template <typename Function>
std::map<std::string, std::string> stable_func_names(const std::map<std::string, Function> &env) {
    std::vector<std::string> names;
    names.reserve(env.size());
    for (const auto &entry : env)
        names.push_back(entry.first);
    return stable_func_names(names);
}

} // namespace gpusched
