#pragma once
// What the DAG's construction (core/function_dag_build.cpp) and its footprint
// members (core/function_dag.cpp) share: a stage's definition as the
// expressions Halide bounds, its loops as the symbolic intervals footprints
// are expressed in, and Halide's boxes of what those expressions read.
// Internal to those two files; nothing outside the DAG includes it.

#include <map>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/function_dag.h"

namespace gpusched::detail {

// What a stage computes, and for an update also where it stores (its
// arguments): the expressions whose reads make its footprints.
std::vector<Halide::Expr> stage_exprs(const Halide::Internal::Definition &def, bool is_update);

// The name of dimension d of f, for messages (its index where f has no such
// argument).
std::string dim_name(const Halide::Internal::Function &f, int d);

// A stage loop as the symbolic interval [var.gs_lo, var.gs_hi] its
// footprints are expressed in.
Halide::Internal::Interval loop_interval(const LoopDim &l);

// The box of each Func or image read by exprs (Halide's boxes_required),
// merged over all of them.
std::map<std::string, Halide::Internal::Box>
required_boxes(const std::vector<Halide::Expr> &exprs,
               const Halide::Internal::Scope<Halide::Internal::Interval> &scope,
               const Halide::Internal::FuncValueBounds &value_bounds);

// Whether e divides or takes a remainder (a rounding footprint).
bool rounds(const Halide::Expr &e);

} // namespace gpusched::detail
