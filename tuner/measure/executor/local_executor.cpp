// The local executor (executor.h): benchmarks run on this machine through a
// Runner, one group per device slot. A slot takes what has arrived, up to
// kMaxBenchmarkGroup tasks, and hands it to Runner::run_many: one harness
// process times them all (one device context, one kernel-compiler start on
// POCL), and each result comes back as soon as it is known. Where the device
// lets compiles overlap benchmarks, a slot starts as soon as tasks are there;
// where it does not (POCL runs on the cores the compiles use; a GPU's samples
// are timed with nothing compiling beside them), the round's tasks wait until
// finish() says the last one has arrived.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "tuner/measure/executor/executor.h"

namespace gpusched {
namespace {

class LocalExecutor : public Executor {
public:
    LocalExecutor(std::unique_ptr<Runner> runner, const std::atomic<bool> *stop)
        : runner_(std::move(runner)), stop_(stop) {}
    ~LocalExecutor() override {
        if (!threads_.empty()) finish();
    }

    const char *name() const override { return "local"; }
    std::string device_name() const override { return runner_->device_name(); }

    void begin(const std::string &, ResultFn on_result) override {
        on_result_ = std::move(on_result);
        closed_ = false;
        stopped_ = false;
        for (int i = 0; i < runner_->slots(); ++i)
            threads_.emplace_back([this] { work(); });
    }
    bool adoptable(const std::string &) override { return false; } // nothing outlives a local driver
    void submit(BenchmarkTask task) override {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(std::move(task));
        changed_.notify_all();
    }
    bool finish() override {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
            changed_.notify_all();
        }
        for (auto &t : threads_)
            t.join();
        threads_.clear();
        return !stopped_;
    }

private:
    void work() {
        for (;;) {
            std::vector<BenchmarkTask> group;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait(
                    lock, [&] { return closed_ || (runner_->compiles_may_overlap() && !queue_.empty()); });
                if (queue_.empty()) return;
                // An interrupt skips what has not started; resume measures it.
                if (stop_ && stop_->load()) {
                    stopped_ = true;
                    queue_.clear();
                    continue;
                }
                while (!queue_.empty() && group.size() < kMaxBenchmarkGroup) {
                    group.push_back(std::move(queue_.front()));
                    queue_.pop_front();
                }
            }
            std::vector<BenchmarkBinary> binaries;
            for (const BenchmarkTask &t : group)
                binaries.push_back(t.binary);
            runner_->run_many(binaries, [&](std::size_t i, const Measurement &m) {
                std::lock_guard<std::mutex> lock(result_mutex_);
                on_result_(group[i], m, ExecutionRecord{{"executor", "local"}});
            });
        }
    }

    std::unique_ptr<Runner> runner_;
    const std::atomic<bool> *stop_;
    ResultFn on_result_;
    std::mutex mutex_, result_mutex_;
    std::condition_variable changed_;
    std::deque<BenchmarkTask> queue_;
    bool closed_ = false;
    std::atomic<bool> stopped_{false};
    std::vector<std::thread> threads_;
};

} // namespace

std::unique_ptr<Executor> make_local_executor(const ExecutorOptions &options) {
    return std::make_unique<LocalExecutor>(make_runner(options.device, options.timing), options.stop);
}

} // namespace gpusched
