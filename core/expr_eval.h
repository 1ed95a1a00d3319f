#pragma once
// A small integer evaluator for the index and bound expressions of a Halide
// pipeline. The search evaluates the symbolic footprints of the function DAG
// (core/function_dag.h) tens of thousands of times per search with concrete
// loop bounds; substituting and calling Halide's simplifier each time would
// dominate the search time, so this walks the Expr directly.
//
// Invariant: evaluate() never guesses. It returns nullopt when the expression
// contains anything whose value is not a pure function of the bound
// variables (a load, an unknown variable, an unsupported node); the caller
// then falls back to a documented approximation.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include <Halide.h>

namespace gpusched {

using VarValues = std::unordered_map<std::string, int64_t>;

// Value of e with every Variable looked up in values (Halide semantics:
// integer division and modulo are Euclidean, float-to-int casts truncate;
// a float-typed result is floored).
std::optional<int64_t> evaluate(const Halide::Expr &e, const VarValues &values);

// True if e is built only from +, -, *, constant division, variables and
// constants: such a bound has the same extent wherever the loop tile sits, so
// an allocation sized by it is constant (what GPU register allocations need).
bool is_affine_bound(const Halide::Expr &e);

} // namespace gpusched
