#pragma once
// The cost model's weights file (docs/weights-format.md): magic, format
// version, the feature-layout versions the weights were trained against,
// the network sizes, a provenance string saying how the weights were made,
// the float32 parameters (NetworkWeights::flatten order) and a CRC-32 of
// everything before it. Little-endian.
//
// Invariant: read_weights_* either returns weights that have the right shape
// and finite values for this build's feature layouts and network, or throws
// std::runtime_error whose message starts with the file's name (path) and
// says what is wrong (missing, truncated, wrong magic, wrong version, wrong
// size, bad checksum, trailing bytes, non-finite value).

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/network_weights.h"

namespace gpusched {

inline constexpr char kWeightsMagic[8] = {'G', 'S', 'C', 'M', 'W', 'G', 'T', 'S'};
// Version 2 adds the cost-formula version after the feature-layout
// versions; version 1 files are read as formula version 1.
inline constexpr std::uint32_t kWeightsFormatVersion = 2;

struct WeightsFile {
    NetworkWeights weights;
    std::string provenance; // free text: how the weights were made
    // The cost formula the weights were trained for (cost_formula.h): the
    // network's outputs mean that formula's coefficients.
    int formula_version = kCostFormulaVersion;
};

std::vector<unsigned char> encode_weights(const WeightsFile &file);
// source names the bytes in error messages (a path, "<embedded default weights>").
WeightsFile decode_weights(const unsigned char *data, std::size_t size, const std::string &source);

// Throws std::runtime_error naming the path if it cannot be written.
void write_weights_file(const std::string &path, const WeightsFile &file);
WeightsFile read_weights_file(const std::string &path);

} // namespace gpusched
