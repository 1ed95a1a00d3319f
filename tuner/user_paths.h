#pragma once
// The files and folders a person names on the command line, checked before
// any work: a weights file that is a directory, or a report path under a
// regular file, is refused in one line naming the option and the path
// (UserError), not found after minutes of searching or reported as a C++
// library's "basic_filebuf::underflow error".

#include <string>

namespace gpusched {

// A file to read: it exists, is not a directory and can be opened.
void check_input_file(const std::string &path, const std::string &option);

// A file to write: not a directory, and its folder exists or is created now.
void check_output_file(const std::string &path, const std::string &option);

// A folder to write into: created now when missing, not a regular file, and
// writable. `what` names it in the error ("--work-dir", "output directory").
void check_output_folder(const std::string &path, const std::string &what);

} // namespace gpusched
