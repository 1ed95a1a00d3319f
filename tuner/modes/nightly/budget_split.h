#pragma once
// How the night's time budget is shared among its pipelines. Each pipeline,
// when its turn comes, gets the time still left times its weight ("share"
// in the config) over the weights of the pipelines still to run. Time one
// pipeline leaves unused (it finished early) goes to those after it, and one
// that overruns (Top 5 is a fixed amount of work; Autotune finishes the
// samples it started) takes it from them, so the night ends near the
// budget either way.

namespace gpusched {

// Seconds for the next pipeline; 0 when nothing is left.
double next_budget_share(double remaining_s, double weight, double weights_left);

} // namespace gpusched
