#pragma once
// Helpers for the command line itself, shared by the subcommands.

#include <map>
#include <string>
#include <vector>

namespace gpusched::cli {

// The invocation as a shell would take it back ("gpusched bench --apps a,b"),
// for reports that print the command that produced them.
std::string command_line_text(int argc, char **argv);

// Generator params given as key=value words. Throws UserError naming a word
// that is not key=value.
std::map<std::string, std::string> parse_generator_params(const std::vector<std::string> &words);

} // namespace gpusched::cli
