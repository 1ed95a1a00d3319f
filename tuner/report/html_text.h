#pragma once
// Text that goes into the report's HTML and SVG. Everything taken from the
// database (schedule sources, error messages, generator params, device
// names) passes through escape_html before it is written, so a '<' in a
// schedule or an error can neither break the page nor inject markup.

#include <string>

namespace gpusched::report {

// Escapes & < > " ' for element text and double-quoted attribute values.
std::string escape_html(const std::string &text);

// A number as a person reads it in a table or a tick label: 4 significant
// digits, no trailing zeros, scientific only for very small or large values.
std::string format_number(double value);

} // namespace gpusched::report
