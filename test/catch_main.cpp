// The one Catch2 main shared by every test executable.
//
// Besides Catch's own options it takes --check-test-names: instead of running
// tests, it checks that every test case's name survives catch_discover_tests
// and ctest as one entry whose filter selects that test case, and exits 1
// naming the file, line and name of each that does not. test/CMakeLists.txt
// (gpusched_discover_tests) registers that check as a ctest entry of every
// test executable.
#if GPUSCHED_CATCH2_MAJOR < 3
#define CATCH_CONFIG_RUNNER // v2: this file's main(), not Catch's
#endif
#include "test/catch2_compat.h"

#include <cstring>
#include <iostream>
#include <string>

namespace {

// Why `name` cannot be a ctest entry's Catch filter, or "" if it can.
// catch_discover_tests escapes ',', '[' and ']' itself.
std::string name_problem(const std::string &name) {
    if (name.find(';') != std::string::npos)
        return "';' splits it into several ctest entries (CMake lists are ';'-separated), whose filters "
               "match nothing";
    if (name.find('\\') != std::string::npos) return "'\\' escapes the next character in a Catch filter";
    if (name.empty()) return "an empty name";
    if (name.front() == '~') return "a leading '~' makes the filter exclude the test";
    if (name.front() == '-') return "a leading '-' makes Catch read the filter as an unknown option";
    if (name.front() == '*' || name.back() == '*')
        return "a leading or trailing '*' makes the filter a wildcard";
    if (name.front() == '#') return "Catch lists a name starting with '#' in quotes";
    return "";
}

int check_test_names() {
    int bad = 0, all = 0;
    for (const auto &test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
#if GPUSCHED_CATCH2_MAJOR >= 3
        const Catch::TestCaseInfo &tc = test.getTestCaseInfo();
#else
        const Catch::TestCaseInfo &tc = test;
#endif
        all++;
        const std::string why = name_problem(tc.name);
        if (why.empty()) continue;
        bad++;
        std::cerr << tc.lineInfo.file << ":" << tc.lineInfo.line << ": test name \"" << tc.name
                  << "\" cannot be a ctest entry: " << why << "\n";
    }
    std::cout << all << " test names checked, " << bad << " cannot be ctest entries\n";
    return bad == 0 && all > 0 ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[]) {
    for (int i = 1; i < argc; i++)
        if (std::strcmp(argv[i], "--check-test-names") == 0) return check_test_names();
    return Catch::Session().run(argc, argv);
}
