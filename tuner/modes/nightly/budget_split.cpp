#include "tuner/modes/nightly/budget_split.h"

#include <cassert>

namespace gpusched {

double next_budget_share(double remaining_s, double weight, double weights_left) {
    assert(weight > 0 && weights_left >= weight && "the next pipeline's weight is among those left");
    if (remaining_s <= 0) return 0;
    return remaining_s * weight / weights_left;
}

} // namespace gpusched
