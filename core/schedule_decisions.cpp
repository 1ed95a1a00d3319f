#include "core/schedule_decisions.h"

#include <stdexcept>

namespace gpusched {

const char *location_name(ComputeLocation l) {
    switch (l) {
    case ComputeLocation::Unscheduled:
        return "unscheduled";
    case ComputeLocation::Root:
        return "root";
    case ComputeLocation::Block:
        return "block";
    case ComputeLocation::Thread:
        return "thread";
    case ComputeLocation::Inline:
        return "inline";
    }
    return "unscheduled";
}

ComputeLocation location_from_name(const std::string &s) {
    for (ComputeLocation l : {ComputeLocation::Unscheduled, ComputeLocation::Root, ComputeLocation::Block,
                              ComputeLocation::Thread, ComputeLocation::Inline}) {
        if (s == location_name(l)) return l;
    }
    throw std::invalid_argument("unknown compute location '" + s + "' (root, block, thread, inline)");
}

} // namespace gpusched
