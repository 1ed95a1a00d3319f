#pragma once
// What a stage's atomic updates wait for when many threads add into few
// addresses (an atomic combining update, docs/search.md "Atomic combining";
// an atomic histogram). The throughput terms count the stores' traffic but
// not that updates of one L2 line are applied one after another: 66.8 M
// updates into a 256-bin histogram (8 lines) take tens of milliseconds
// however little they move.
//
// Calibrated on an H100 with benchmarks/atomic_contention/atomic_contention.cu
// (docs/costmodel.md, "atomic contention", has the table): 2^24 atomic adds,
// every lane of a warp adding to the same address:
//   - one line: 0.73 ns per update for int32, 1.76 ns for float32;
//   - spread over L lines: about 3.5 ns / L per update for either type,
//     within 1.3x for L = 8 to 256, whether the addresses are packed into
//     the lines (256 ints: 8 lines) or one per line, and never below
//     0.012 ns (the GPU's whole atomic throughput);
//   - lanes adding to different addresses of one line cost less (down to a
//     tenth); the model assumes the worst, warp-uniform addresses, because
//     the features do not say which loop the lanes run over.
// Used by both models: the analytic model's soft maximum, and a fixed term
// of the network's stage cost since cost-formula version 3 (cost_formula.h).

#include "costmodel/pipeline_features.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

// What a stage stores, as far as contention goes.
struct AtomicStore {
    double bytes_per_point = 0; // of its store's type; 0: it stores nothing the features know
    bool floating = false;      // float atomics are slower at one address than integer ones
};

// From the types a stage's pipeline features say it stores (the widest).
AtomicStore atomic_store_of(const PipelineFeatures &p);

// The ms a stage's updates wait at their lines. 0 unless the stage is
// realized once (stored at root) and more updates land on a stored point
// than twice the points any one thread runs: a stage without atomic stores
// updates each point in one thread, never more often than that thread's
// points, and a Func realized per block recomputes overlapping points into
// separate buffers, so no other stage is charged.
double atomic_contention_ms(const ScheduleFeatures &f, const AtomicStore &store);

} // namespace gpusched
