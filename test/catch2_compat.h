#pragma once
// Catch2 for every test, v2 (Debian 12) or v3 (Debian 13 on), chosen by
// test/CMakeLists.txt (GPUSCHED_CATCH2_MAJOR). The tests are written against
// what both offer, in v2's spelling: Approx, Catch::Contains and
// Catch::StartsWith (string matchers; v3 renamed Contains to
// ContainsSubstring and moved both to Catch::Matchers).

#if GPUSCHED_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>

#include <string>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string &s, CaseSensitive cs = CaseSensitive::Yes) {
    return Matchers::ContainsSubstring(s, cs);
}
inline Matchers::StartsWithMatcher StartsWith(const std::string &s, CaseSensitive cs = CaseSensitive::Yes) {
    return Matchers::StartsWith(s, cs);
}
} // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
