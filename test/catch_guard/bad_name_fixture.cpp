// A test executable with the mistake the guard is for: a test name with ';'.
// test_catch_guard.cpp runs it; ctest never does (its name would become two
// entries, "a test name" and " split by catch_discover_tests").
#include "test/catch2_compat.h"

TEST_CASE("a test name; split by catch_discover_tests", "[fixture]") {
    CHECK(1 + 1 == 2);
}
