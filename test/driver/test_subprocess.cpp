#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "test/catch2_compat.h"

#include "tuner/subprocess.h"

using namespace gpusched;

TEST_CASE("a process's exit status and both output streams are captured", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
    ProcessResult r = run_process(spec);
    CHECK(r.started);
    CHECK_FALSE(r.ok());
    CHECK(r.exit_code == 3);
    CHECK(r.out == "out\n");
    CHECK(r.err == "err\n");
    CHECK(r.describe_failure() == "exit status 3");
}

TEST_CASE("extra environment variables reach the child", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "printf %s \"$GPUSCHED_TEST_VAR\""};
    spec.env["GPUSCHED_TEST_VAR"] = "hello world";
    ProcessResult r = run_process(spec);
    CHECK(r.ok());
    CHECK(r.out == "hello world");
}

TEST_CASE("a timeout kills the child and everything it started", "[subprocess]") {
    ProcessSpec spec;
    // The grandchild would keep the pipe open if it survived.
    spec.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
    spec.timeout = std::chrono::milliseconds(300);
    ProcessResult r = run_process(spec);
    CHECK(r.timed_out);
    CHECK_FALSE(r.ok());
    CHECK(r.wall_seconds < 5);
    CHECK(r.describe_failure().find("timed out") == 0);
}

TEST_CASE("a child that hangs after delivering its work is killed after the grace, not the timeout",
          "[subprocess]") {
    // As a benchmark harness whose OpenCL driver hangs in its destructors
    // after main: every result is out, the process never exits. Once with
    // stdout still open, once closed before the hang (the waitpid path).
    for (const char *script : {"echo result; sleep 30", "echo result; exec >&-; sleep 30"}) {
        ProcessSpec spec;
        spec.argv = {"/bin/sh", "-c", script};
        spec.timeout = std::chrono::seconds(30);
        spec.exit_grace = std::chrono::milliseconds(200);
        int chunks = 0;
        spec.on_stdout = [&] { return ++chunks >= 1; };
        ProcessResult r = run_process(spec);
        INFO(script);
        CHECK(r.out == "result\n");
        CHECK(r.ended_after_its_work);
        CHECK_FALSE(r.timed_out);
        CHECK(r.wall_seconds < 5);
        CHECK(r.describe_failure().find("killed after its work was done") == 0);
    }
}

TEST_CASE("a child that exits within the grace after its work keeps its exit status", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo result; sleep 0.2; exit 4"};
    spec.exit_grace = std::chrono::seconds(10);
    spec.on_stdout = [] { return true; };
    ProcessResult r = run_process(spec);
    CHECK_FALSE(r.ended_after_its_work);
    CHECK(r.exit_code == 4);
}

TEST_CASE("a child whose work is not done yet keeps its whole timeout", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo partial; sleep 1; echo rest"};
    spec.exit_grace = std::chrono::milliseconds(100);
    spec.on_stdout = [] { return false; };
    ProcessResult r = run_process(spec);
    CHECK(r.ok());
    CHECK(r.out == "partial\nrest\n");
}

TEST_CASE("a child inherits only its standard streams even while other threads start children",
          "[subprocess]") {
    // The driver's workers start generators, compilers and benchmarks at
    // once. A child that inherited the pipe of a run another thread was
    // starting would hold that run's output open until it exited itself:
    // the other run would wait for it (or for its own timeout).
    std::atomic<bool> done{false};
    std::vector<std::thread> starters;
    for (int t = 0; t < 4; ++t)
        starters.emplace_back([&] {
            while (!done) {
                ProcessSpec quick;
                quick.argv = {"true"};
                run_process(quick);
            }
        });
    int listings = 0;
    std::string extra;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(4);
    while (std::chrono::steady_clock::now() < until) {
        ProcessSpec list;
        list.argv = {"ls", "/proc/self/fd"}; // 0, 1, 2 and ls's own handle on the directory
        const ProcessResult r = run_process(list);
        ++listings;
        if (!r.ok()) {
            extra = "ls failed: " + r.describe_failure(); // the threads are joined below either way
            break;
        }
        if (r.out != "0\n1\n2\n3\n" && extra.empty()) extra = r.out;
    }
    done = true;
    for (auto &t : starters)
        t.join();
    INFO(listings << " listings beside 4 threads starting children; one with more: " << extra);
    CHECK(listings > 20);
    CHECK(extra.empty());
}

TEST_CASE("a memory limit caps the child's address space and its children's", "[subprocess]") {
    ProcessSpec spec;
    // ulimit -v prints the address-space limit in KiB; the inner shell shows it is inherited.
    spec.argv = {"/bin/sh", "-c", "ulimit -v; /bin/sh -c 'ulimit -v'"};
    spec.memory_limit_bytes = std::uint64_t{256} << 20;
    ProcessResult r = run_process(spec);
    REQUIRE(r.ok());
    CHECK(r.out == "262144\n262144\n");
    spec.memory_limit_bytes.reset();
    r = run_process(spec);
    REQUIRE(r.ok());
    CHECK(r.out == "unlimited\nunlimited\n");
}

TEST_CASE("a child that may be built with AddressSanitizer runs without the memory limit", "[subprocess]") {
    // ASan's shadow memory takes terabytes of address space: under the limit
    // an instrumented generator aborts before main. ASAN_OPTIONS in the
    // child's environment (scripts/sanitizer-fuzz.sh sets it) says it may be.
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "ulimit -v"};
    spec.memory_limit_bytes = std::uint64_t{256} << 20;
    spec.env["ASAN_OPTIONS"] = "detect_leaks=0";
    ProcessResult r = run_process(spec);
    REQUIRE(r.ok());
    CHECK(r.out == "unlimited\n");
}

TEST_CASE("a child killed by a signal is reported with the signal", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
    ProcessResult r = run_process(spec);
    CHECK(r.term_signal == 11);
    CHECK(r.describe_failure().find("signal 11") != std::string::npos);
}

TEST_CASE("a program that does not exist is reported, not thrown", "[subprocess]") {
    ProcessSpec spec;
    spec.argv = {"/nonexistent/program"};
    ProcessResult r = run_process(spec);
    CHECK_FALSE(r.started);
    CHECK(r.start_error.find("/nonexistent/program") != std::string::npos);
}

TEST_CASE("last_lines keeps the final non-empty lines", "[subprocess]") {
    CHECK(last_lines("a\n\nb\nc\n\n", 2) == "b\nc");
    CHECK(last_lines("", 2).empty());
}
