// Catch names what a Halide error says. From Halide 17 on, Halide::Error is
// no std::exception (Halide 14's derived from std::runtime_error), so without
// this Catch reports "Unknown exception" and CHECK_THROWS_WITH finds no text.
// Linked once into each test executable that calls Halide.
#include "test/catch2_compat.h"

#include <Halide.h>

CATCH_TRANSLATE_EXCEPTION(const Halide::Error &e) {
    return e.what();
}
