#pragma once
// The weights compiled into the build (costmodel/weights/default.weights,
// embedded as a byte array by cmake/embed_file.cmake at build time), so the
// plugin works with no weights file. docs/costmodel.md says how they were made;
// default_weights_provenance() says it at run time (gpusched --version).
//
// Invariant: the embedded bytes are a valid weights file for this build;
// default_weights() parses them once (a build whose embedded file is invalid
// throws at first use, naming "<embedded default weights>").

#include "costmodel/weights_file.h"

namespace gpusched {

const WeightsFile &default_weights();
const char *default_weights_provenance();

} // namespace gpusched
