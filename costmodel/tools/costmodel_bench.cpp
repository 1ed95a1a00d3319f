// gpusched_costmodel_bench: network throughput in stage evaluations per
// second on one core, batched as the search batches them (a batch of states
// of one pipeline through NetworkCostModel::evaluate). Not a test: prints
// figures for docs/results/costmodel-throughput.md.
//
//   gpusched_costmodel_bench [--states-per-batch N] [--seconds S] [--gpu NAME]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#include "common/gpu_profile.h"
#include "costmodel/analytic_cost_model.h"
#include "costmodel/default_weights.h"
#include "costmodel/network_cost_model.h"
#include "costmodel/tools/synthetic_states.h"

using namespace gpusched;

namespace {

// CPU time of this thread: the machine running the bench is shared, so wall
// time would measure the neighbours as much as the model.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

template <typename Model>
void run(const char *name, Model &model, const std::vector<SyntheticPipeline> &pipes,
         const std::vector<std::vector<StateFeatures>> &states, double seconds) {
    std::vector<double> costs;
    double sink = 0;
    long rows = 0, evals = 0;
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_seconds();
    double elapsed = 0;
    while (elapsed < seconds) {
        for (std::size_t p = 0; p < pipes.size(); ++p) {
            model.set_pipeline(pipes[p].stages);
            std::vector<const StateFeatures *> batch;
            for (const auto &s : states[p]) {
                batch.push_back(&s);
                rows += static_cast<long>(s.schedule.size());
            }
            model.evaluate(batch, costs);
            evals += static_cast<long>(batch.size());
            sink += costs[0];
        }
        elapsed = thread_cpu_seconds() - cpu_start;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-9s %10.0f stage-evaluations per CPU-second, %9.0f states per CPU-second "
                "(%ld stage rows, %.2f s CPU, %.2f s wall: %.0f stage-evaluations/s wall; checksum %.3g)\n",
                name, double(rows) / elapsed, double(evals) / elapsed, rows, elapsed, wall,
                double(rows) / wall, sink);
}

} // namespace

int main(int argc, char **argv) {
    int per_batch = 256;
    double seconds = 3;
    std::string gpu_name = "h100";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        if (k == "--states-per-batch")
            per_batch = std::atoi(argv[i + 1]);
        else if (k == "--seconds")
            seconds = std::atof(argv[i + 1]);
        else if (k == "--gpu")
            gpu_name = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown argument %s\n", k.c_str());
            return 2;
        }
    }
    const auto gpu = find_builtin_gpu_profile(gpu_name);
    if (!gpu) {
        std::fprintf(stderr, "unknown --gpu %s\n", gpu_name.c_str());
        return 2;
    }

    std::mt19937_64 rng(7);
    std::vector<SyntheticPipeline> pipes;
    std::vector<std::vector<StateFeatures>> states;
    for (int p = 0; p < 16; ++p) {
        pipes.push_back(random_synthetic_pipeline(rng));
        states.emplace_back();
        for (int s = 0; s < per_batch; ++s)
            states.back().push_back(random_synthetic_state(pipes.back(), *gpu, rng));
    }
    std::printf("batches of %d states, 16 synthetic pipelines, GPU profile %s, one thread\n", per_batch,
                gpu->name.c_str());
    NetworkCostModel net(default_weights(), *gpu);
    run("network", net, pipes, states, seconds);
    AnalyticGpuCostModel analytic(*gpu);
    run("analytic", analytic, pipes, states, seconds);
    return 0;
}
