#pragma once
// Reading the report's HTML in tests: the page marks what it draws (each
// group's <section data-pipeline data-device>, each plot's
// <svg data-kind data-points>, each point's <circle class="point">), so a
// test finds a part of the page and counts what is in it without an HTML
// parser.

#include <string>
#include <vector>

namespace gpusched::test {

// Occurrences of `needle` in `text`.
std::size_t count(const std::string &text, const std::string &needle);

// The text of every element that starts with `open_prefix` (e.g.
// "<section class=\"card group\"") up to its closing tag `close` (e.g.
// "</section>"); elements of this kind do not nest in the report.
std::vector<std::string> elements(const std::string &text, const std::string &open_prefix,
                                  const std::string &close);

// The value of attribute `name` in the first tag of `element`; empty when absent.
std::string attribute(const std::string &element, const std::string &name);

// The group section of a pipeline on a device; empty when there is none.
std::string group_section(const std::string &html, const std::string &pipeline,
                          const std::string &device_escaped);

// Every <svg> of this data-kind inside `text`, in page order.
std::vector<std::string> plots(const std::string &text, const std::string &kind);

} // namespace gpusched::test
