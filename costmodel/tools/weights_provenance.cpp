// gpusched_weights_provenance: prints a weights file's provenance string, or
// writes a copy whose provenance has TEXT appended, parameters untouched
// (bit for bit). Used to record what was learned about the default weights
// after they were made (e.g. how they rank held-out real search states)
// without refitting them; the text shows in `gpusched --version`. With
// --formula N the copy is marked as weights for cost-formula version N: a
// later formula's fixed part (cost_formula.h) then applies to them, which
// the TEXT must say.
//
//   gpusched_weights_provenance IN                       print
//   gpusched_weights_provenance IN --append TEXT [--formula N] --out OUT

#include <cstdio>
#include <string>

#include "costmodel/weights_file.h"

using namespace gpusched;

int main(int argc, char **argv) {
    const bool with_formula = argc == 8 && std::string(argv[4]) == "--formula";
    const int out_at = with_formula ? 6 : 4;
    if (argc != 2 && !((argc == 6 || with_formula) && std::string(argv[2]) == "--append" &&
                       std::string(argv[out_at]) == "--out")) {
        std::fprintf(stderr,
                     "usage: gpusched_weights_provenance IN [--append TEXT [--formula N] --out OUT]\n");
        return 2;
    }
    try {
        WeightsFile w = read_weights_file(argv[1]);
        if (argc == 2) {
            std::printf("%s\n", w.provenance.c_str());
            return 0;
        }
        w.provenance += std::string(" ") + argv[3];
        if (with_formula) {
            const std::string n = argv[5];
            if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos ||
                std::stoi(n) < w.formula_version || std::stoi(n) > kCostFormulaVersion) {
                std::fprintf(stderr, "error: --formula %s: give a version from %d (the file's) to %d\n",
                             argv[5], w.formula_version, kCostFormulaVersion);
                return 2;
            }
            w.formula_version = std::stoi(n);
        }
        const char *out = argv[out_at + 1];
        write_weights_file(out, w);
        // Read back: the copy must decode to the same parameters.
        if (read_weights_file(out).weights.flatten() != w.weights.flatten()) {
            std::fprintf(stderr, "error: %s does not read back with the same parameters\n", out);
            return 1;
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
