// The report's --since: ISO dates and date-times become the database's UTC
// timestamp form, so a string comparison with runs.started_at selects the
// runs started at or after it; anything else is refused naming the text.

#include "test/catch2_compat.h"

#include "common/errors.h"
#include "tuner/report/report_data.h"

using gpusched::UserError;
using gpusched::report::parse_since;

TEST_CASE("the --since filter takes an ISO date or date-time and gives the database's timestamp form",
          "[filter]") {
    CHECK(parse_since("2026-11-23") == "2026-11-23T00:00:00.000Z");
    CHECK(parse_since("2026-11-23T06:05") == "2026-11-23T06:05:00.000Z");
    CHECK(parse_since("2026-11-23 06:05:30") == "2026-11-23T06:05:30.000Z");
    CHECK(parse_since("2026-11-23T06:05:30Z") == "2026-11-23T06:05:30.000Z");
    CHECK(parse_since("2026-11-23T06:45:58.701Z") == "2026-11-23T06:45:58.701Z");
}

TEST_CASE("the --since filter refuses what is not an ISO date, naming it", "[filter]") {
    for (const char *bad :
         {"yesterday", "23/11/2026", "2026-11", "2026-13-01", "2026-11-32", "2026-11-23T25:00",
          "2026-11-23T06", "2026-11-23T06:05:30.7", "2026-11-23T06:05:30.701x", ""}) {
        INFO(bad);
        try {
            parse_since(bad);
            FAIL("accepted");
        } catch (const UserError &e) {
            CHECK(std::string(e.what()).find("--since '" + std::string(bad) + "' is not an ISO date") == 0);
        }
    }
}
