#pragma once
// A problem in what the user gave (a pipeline without an estimate, a bad
// config key, a bad command-line value): the message names the Func,
// dimension, key or option, and is the whole explanation, on one line. One
// type for the search core and the driver (tuner/user_error.h adds the
// driver's other two), so a file that includes both layers compiles.

#include <stdexcept>

namespace gpusched {

class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace gpusched
