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
