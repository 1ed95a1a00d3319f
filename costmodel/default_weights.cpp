#include "costmodel/default_weights.h"

#include <cstddef>

// Generated at build time from costmodel/weights/default.weights.
extern const unsigned char gpusched_default_weights_data[];
extern const std::size_t gpusched_default_weights_size;

namespace gpusched {

const WeightsFile &default_weights() {
    static const WeightsFile w = decode_weights(gpusched_default_weights_data, gpusched_default_weights_size,
                                                "<embedded default weights>");
    return w;
}

const char *default_weights_provenance() {
    return default_weights().provenance.c_str();
}

} // namespace gpusched
