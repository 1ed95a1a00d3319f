#pragma once
// The database the report tests read: made by really running gpusched on
// POCL (--device opencl) with tiny_stencil and wrong_on_gpu from
// test/driver/generators, so every time, prediction, batch statistic and
// failure in it was produced by the tuner, not written by a test:
//
//  - autotune: an Autotune run of tiny_stencil, 2 batches x 3 samples (the
//    model retrained between them);
//  - top5: a Top 5 run of tiny_stencil (3 samples, 2 timed) with the naive
//    and li2018 baselines measured as their own runs;
//  - wrong: an Autotune run of wrong_on_gpu, whose GPU build computes
//    something else, so its samples fail with "wrong output" and a reason.
//  - relabeled: a DB-level fixture, labelled as one. This machine has one
//    device (POCL); to check that two devices are never drawn as one series,
//    the autotune run's rows are copied into a new run whose samples carry
//    the device name kRelabeledDevice. Nothing else is changed; the copy is
//    not a measurement, and its device name says so.
//
// It is made once per test run: ctest runs "report.make the recorded
// database" first (a FIXTURES_SETUP test, which rebuilds it from scratch);
// a test run outside ctest makes it on first use. A lock file keeps two
// test processes from making it at once.

#include <cstdint>
#include <string>

namespace gpusched::test {

inline constexpr const char *kRelabeledDevice = "relabeled copy (test fixture, not a measurement)";

struct RecordedDb {
    std::string dir, db_path;
    int64_t autotune_run = 0, top5_run = 0, wrong_run = 0, relabeled_run = 0;
    std::string error; // why it could not be made; empty when it was
};

// The database, made if it is not there yet.
const RecordedDb &recorded_db();
// Makes it again from scratch (the ctest setup step).
RecordedDb remake_recorded_db();

} // namespace gpusched::test
