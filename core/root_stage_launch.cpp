#include "core/root_stage_launch.h"

#include <algorithm>

namespace gpusched {

int64_t tile_root_stage(const Stage &st, const std::vector<Span> &loops, const StageTiling *tiling,
                        std::vector<int64_t> &serial, std::vector<int64_t> &thread,
                        std::vector<int64_t> &block) {
    const size_t nl = loops.size();
    serial.assign(nl, 1);
    thread.assign(nl, 1);
    block.assign(nl, 1);
    int64_t num_blocks = 1;
    for (size_t i = 0; i < nl; i++) {
        const int64_t ext = loops[i].extent();
        if (!st.tileable(i)) {
            serial[i] = ext;
            continue;
        }
        if (tiling) {
            serial[i] = std::min(ext, tiling->serial[i]);
            thread[i] = std::min((ext + serial[i] - 1) / serial[i], tiling->thread[i]);
        }
        const int64_t tile = serial[i] * thread[i];
        block[i] = (ext + tile - 1) / tile;
        num_blocks *= block[i];
    }
    return num_blocks;
}

int64_t assign_thread_slots(const Stage &st, const std::vector<int64_t> &thread, std::vector<int> &slot,
                            std::array<int64_t, 3> &shape) {
    slot.assign(st.loops.size(), -1);
    shape = {1, 1, 1};
    int next = 0;
    for (size_t i = 0; i < st.loops.size() && next < 3; i++) {
        if (st.tileable(i) && thread[i] > 1) {
            slot[i] = next;
            shape[next++] = thread[i];
        }
    }
    return shape[0] * shape[1] * shape[2];
}

} // namespace gpusched
