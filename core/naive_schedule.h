#pragma once
// The naive GPU schedule as search decisions: every Func computed at root in
// a kernel of its own, each stage tiled 16 x 16 threads over its first two
// pure dimensions (16 threads over a 1-D Func's one), every other loop serial
// inside the thread. It is the floor every suite app offers as its `naive`
// schedule (benchmarks/apps/common/schedule_helpers.h, naive_gpu), written
// in the decisions the search makes, so that the cost model can rank it
// against the search's own picks (issue 55): on real GPUs the model's pick
// lost to it on 9 of 17 suite apps, and a schedule the model never costs is
// one it can never prefer.
//
// Invariants: the result has one decision per DAG node; a Func Halide cannot
// bound at root (some read of it is unbounded, Node::always_inline through
// Edge::unbounded_in_halide) is inlined, as Halide itself would need; every
// other Func is at Root with one tiling per stage. Thread extents larger
// than a loop's extent are clamped by the loop nest (tile_root_stage), as
// Halide's GuardWithIf tiles of the apps' naive schedule leave idle threads.

#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched {

// The apps' naive thread tile: 16 on each of the first two pure dimensions.
constexpr int64_t kNaiveThreadExtent = 16;

Decisions naive_decisions(const FunctionDAG &dag);

} // namespace gpusched
