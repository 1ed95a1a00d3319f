#pragma once
// Loads a local HTML file in Debian's headless Chromium the way a person
// opens the report from disk, and says what the browser saw: every console
// error (console.error, uncaught exceptions, and the browser's own error log
// entries, such as a malformed SVG attribute or a resource that failed to
// load), every network request other than the page itself, and a PNG
// screenshot of the whole page.
//
// It speaks the DevTools protocol over --remote-debugging-pipe (JSON
// messages separated by NUL bytes on fds 3 and 4), which reports these as
// structured events; scraping --enable-logging output would depend on log
// formats that change between Chromium versions. The tuner's subprocess
// helper cannot hand a child extra descriptors, so this spawns Chromium
// itself, in its own process group, killed on timeout.

#include <string>
#include <vector>

namespace gpusched::test {

struct PageLoad {
    std::string failure;                     // why the check could not run; empty when it ran
    bool loaded = false;                     // the load event fired
    std::vector<std::string> console_errors; // one line each: source and text
    std::vector<std::string> requests;       // URLs requested besides the page
    int page_height = 0;                     // CSS pixels of the full page
};

// The Chromium executable in PATH (chromium, else chromium-browser); empty
// when there is none.
std::string find_chromium();

// Opens file://html_path at `width` CSS pixels and, when png_path is not
// empty, writes a screenshot of the full page there.
PageLoad load_in_headless_chromium(const std::string &html_path, const std::string &png_path,
                                   int width = 1280, int timeout_s = 60);

} // namespace gpusched::test
