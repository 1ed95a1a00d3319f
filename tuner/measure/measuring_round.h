#pragma once
// A measuring round: the loop that every mode which times schedules shares
// (Top 5's chosen samples and baselines, each Autotune batch, Autotune's
// baselines). The mode says what an item is and what to do with its result;
// the round does the rest:
//
//   workers (jobs at a time) claim items in order -> prepare each (search,
//   store, build: the mode's code) -> submit the benchmark to the executor,
//   or hand on at once what never reached the device -> each measurement to
//   measured(), one call at a time.
//
// It is the build -> run -> record flow of TVM MetaSchedule's measure
// loop: the mode owns policy (what to sample, when to stop, what to keep),
// the round owns concurrency, the executor and error propagation.
//
// Invariants: measured() is called once per item that prepared to a
// measurement (its own or the executor's), never twice at once. The first
// exception thrown by prepare() or measured() (a database that failed)
// stops further claims and is rethrown once the workers are joined and the
// executor has finished, so nothing is left running. Items a stop ended
// before they ran get no measured() call: they are the resume's.

#include <cstddef>
#include <functional>
#include <string>

#include "tuner/measure/executor/executor.h"
#include "tuner/measure/runner/benchmark_build.h"

namespace gpusched {

// What preparing one item gave the round to do.
struct PreparedWork {
    enum class Then {
        Submit,  // benchmark `binary` under `key`
        Adopt,   // follow what an earlier driver submitted under `key`
        Record,  // never reached the device: hand `measurement` to measured()
        Nothing, // the mode recorded what it had to (a search that failed)
    };
    Then then = Then::Nothing;
    std::string key;
    BenchmarkBinary binary;
    Measurement measurement;

    static PreparedWork submit(std::string key, BenchmarkBinary binary);
    static PreparedWork adopt(std::string key, std::string label);
    static PreparedWork record(Measurement measurement);
    static PreparedWork nothing() { return {}; }
};

struct RoundPlan {
    std::string scope; // the executor's scope, one per tuning run ("run-12")
    std::size_t items = 0;
    int jobs = 1; // items prepared at once
    // Called under the round's claim lock with the next item, before it is
    // claimed; false ends the claiming (a stop flag, a sample budget). Empty: always true.
    std::function<bool(std::size_t item)> may_claim;
    // On a worker thread; several run at once.
    std::function<PreparedWork(std::size_t item)> prepare;
    // One call at a time, from a worker or the executor's thread.
    std::function<void(std::size_t item, const Measurement &, const ExecutionRecord &)> measured;
};

// Runs the round to its end. Returns false when the executor's stop flag
// ended it early (what had not run gets no measured() call).
bool run_measuring_round(Executor &executor, const RoundPlan &plan);

// What an item that was built comes to: a benchmark to submit, or, when
// there is no CPU reference to check its output against or the build
// failed, a measurement of why it was not benchmarked.
PreparedWork after_build(const std::string &key, const std::string &label, const BenchmarkBuild &build,
                         const ReferenceOutputs &reference, const std::string &device_name,
                         DeviceKind device);

} // namespace gpusched
