#pragma once
// Finding a test pipeline's Func among the search's DAG nodes.

#include <Halide.h>

#include "core/function_dag.h"
#include "test/catch2_compat.h"

namespace gpusched::test {

// The index of f's node; fails the test where the DAG has none.
inline int node_named(const FunctionDAG &dag, const Halide::Func &f) {
    const int n = dag.node_index(f.name());
    REQUIRE(n >= 0);
    return n;
}

} // namespace gpusched::test
