#pragma once
// Storage layout as a search decision (issue 59; ALT, Zhang et al.): the
// dimension an intermediate stores innermost (FuncDecision::
// storage_innermost). On a GPU a warp reads an allocation coalesced only
// where its lanes walk the dimension of stride 1; a Func written in one
// orientation and read in the other (a transpose, a column pass, a
// channel-major read of channel-minor data) costs a 32-byte sector per lane
// in its definition's layout, and Halide lets the schedule store it the
// reader's way (Func::reorder_storage) with no conversion pass.
//
// The search offers, at a Func's location step, its definition's layout and
// each other dimension that some reader walks with its innermost pure loop
// (the loop a stage's fastest threads normally run along) while that loop
// leaves dimension 0 in place. The cost model then prices the reads and the
// writes in the layout chosen (core/featurize_schedule.cpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/function_dag.h"
#include "core/schedule_decisions.h"

namespace gpusched {

// The strides, in elements, of the first `dims` dimensions of an allocation
// of shape `alloc` stored with dimension `innermost` innermost and the others
// in their order outside it (innermost 0: Halide's default, dense in
// definition order), the innermost one stored `padding` elements wider than
// its extent (FuncDecision::pad_shared). Dimensions past alloc's count as
// extent 1.
void storage_strides(const Region &alloc, size_t dims, int innermost, int64_t padding,
                     std::vector<int64_t> &out);

// Whether Func n may store in another layout than its definition's: it is
// not an output (whose layout is the caller's buffer) and has two or more
// dimensions.
bool layout_is_choosable(const FunctionDAG &dag, int n);

// The dimensions other than 0 that readers of Func n walk with their
// innermost pure loop, ascending, in a state where n's consumers are
// decided: direct readers, and the readers of consumers that are inlined
// (their indices composed). Empty where n's layout is not choosable.
std::vector<int> dimensions_readers_walk(const FunctionDAG &dag, const Decisions &d, int n);

// At Func n's location step (its consumers decided in `parent`): each of its
// Block options again with every dimension its readers walk stored
// innermost, and with `padding` each again in the definition's layout with
// its shared tile padded (FuncDecision::pad_shared), after the options as
// they were. A Block option is tiled whole at that step; a Root one is
// tiled in the steps that follow, and until then its stores are one lane
// wide, which no layout changes: the beam search offers a Root Func's
// layouts with the tilings of its last stage instead (core/beam_expansion.cpp).
void add_layout_options(const FunctionDAG &dag, const Decisions &parent, int n, bool padding,
                        std::vector<FuncDecision> &options);

} // namespace gpusched
