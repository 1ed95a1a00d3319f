#pragma once
// How a sample of a batch is said on the terminal, the same in One Shot and
// Top 5. A failure is said once (issue 57): the progress line names only
// the outcome, and the reason is said at the end, in the report where the
// run goes on or in the error where it stops; identical reasons of many
// samples are one line.

#include <string>
#include <vector>

#include "tuner/generate/batch.h"

namespace gpusched {

// "predicted 0.0123", "compiled", or "failed" / "timed out" with where the
// reason is said.
std::string sample_progress(const OneShotSample &s);

// One line per distinct generator failure, naming the samples it ended:
// "samples 0, 2 failed: <message>". Empty when every sample ran.
std::vector<std::string> sample_failure_lines(const std::vector<OneShotSample> &samples);

} // namespace gpusched
