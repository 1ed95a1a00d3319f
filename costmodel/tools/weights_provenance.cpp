// gpusched_weights_provenance: prints a weights file's provenance string, or
// writes a copy whose provenance has TEXT appended, parameters untouched
// (bit for bit). Used to record what was learned about the default weights
// after they were made (e.g. how they rank held-out real search states)
// without refitting them; the text shows in `gpusched --version`.
//
//   gpusched_weights_provenance IN                       print
//   gpusched_weights_provenance IN --append TEXT --out OUT

#include <cstdio>
#include <string>

#include "costmodel/weights_file.h"

using namespace gpusched;

int main(int argc, char **argv) {
    if (argc != 2 && !(argc == 6 && std::string(argv[2]) == "--append" && std::string(argv[4]) == "--out")) {
        std::fprintf(stderr, "usage: gpusched_weights_provenance IN [--append TEXT --out OUT]\n");
        return 2;
    }
    try {
        WeightsFile w = read_weights_file(argv[1]);
        if (argc == 2) {
            std::printf("%s\n", w.provenance.c_str());
            return 0;
        }
        w.provenance += std::string(" ") + argv[3];
        write_weights_file(argv[5], w);
        // Read back: the copy must decode to the same parameters.
        if (read_weights_file(argv[5]).weights.flatten() != w.weights.flatten()) {
            std::fprintf(stderr, "error: %s does not read back with the same parameters\n", argv[5]);
            return 1;
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
