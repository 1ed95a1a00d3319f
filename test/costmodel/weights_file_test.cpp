// Weights files: save-and-load predicts identically; every kind of bad file
// is a clear error naming the file, never a crash.
#include "test/catch2_compat.h"

#include <fstream>

#include "costmodel/crc32.h"
#include "costmodel/default_weights.h"
#include "costmodel/network_cost_model.h"
#include "costmodel/weights_file.h"
#include "fixtures.h"

using namespace gpusched;

namespace {

std::vector<unsigned char> valid_bytes() {
    WeightsFile f{NetworkWeights::initial(42), "test weights: initial(42)"};
    return encode_weights(f);
}

std::string write_bytes(const std::string &name, const std::vector<unsigned char> &bytes) {
    const std::string path = test::tmp_path(name);
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    os.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}

// Byte offsets in the format (docs/weights-format.md).
constexpr std::size_t kVersionOffset = 8;
constexpr std::size_t kScheduleLayoutOffset = 12;
constexpr std::size_t kFormulaOffset = 20;
constexpr std::size_t kFirstSizeOffset = 24;

// The same file in format version 1, which had no cost-formula field: the
// field removed, the version set to 1 and the checksum recomputed.
std::vector<unsigned char> as_format_version_1(std::vector<unsigned char> v2) {
    v2.erase(v2.begin() + kFormulaOffset, v2.begin() + kFormulaOffset + 4);
    v2[kVersionOffset] = 1;
    v2.resize(v2.size() - 4);
    const std::uint32_t crc = crc32(v2.data(), v2.size());
    for (int b = 0; b < 4; b++)
        v2.push_back(static_cast<unsigned char>(crc >> (8 * b)));
    return v2;
}

// What two weights files predict for the same n random states of one
// random pipeline (seeded).
std::pair<std::vector<double>, std::vector<double>> predictions(const WeightsFile &a, const WeightsFile &b,
                                                                std::uint64_t seed, int n) {
    std::mt19937_64 rng(seed);
    const GpuProfile g = test::h100();
    const auto sp = random_synthetic_pipeline(rng);
    std::vector<StateFeatures> states;
    for (int i = 0; i < n; ++i)
        states.push_back(random_synthetic_state(sp, g, rng));
    std::vector<const StateFeatures *> ptrs;
    for (const auto &s : states)
        ptrs.push_back(&s);
    NetworkCostModel ma(a, g), mb(b, g);
    ma.set_pipeline(sp.stages);
    mb.set_pipeline(sp.stages);
    std::pair<std::vector<double>, std::vector<double>> out;
    ma.evaluate(ptrs, out.first);
    mb.evaluate(ptrs, out.second);
    return out;
}

} // namespace

TEST_CASE("weights file: save then load predicts identically", "[weights]") {
    NetworkWeights w = NetworkWeights::initial(7);
    w.coef_b[5] = -0.25f; // not the initializer's value, to see it survive
    const WeightsFile original{w, "saved by the round-trip test"};
    const std::string path = test::tmp_path("roundtrip.weights");
    write_weights_file(path, original);
    const WeightsFile loaded = read_weights_file(path);
    CHECK(loaded.provenance == original.provenance);
    CHECK(loaded.weights.flatten() == original.weights.flatten());

    const auto [ca, cb] = predictions(original, loaded, 1, 16);
    CHECK(ca == cb);
}

TEST_CASE("weights file: the embedded defaults decode and carry a provenance", "[weights]") {
    const WeightsFile &d = default_weights();
    CHECK(d.weights.valid_shape());
    CHECK(!d.provenance.empty());
}

TEST_CASE("weights file: a missing file is an error naming the path", "[weights]") {
    CHECK_THROWS_WITH(read_weights_file("/nonexistent/dir/model.weights"),
                      Catch::StartsWith("/nonexistent/dir/model.weights") && Catch::Contains("cannot open"));
}

TEST_CASE("weights file: every truncation is an error naming the path", "[weights]") {
    const auto bytes = valid_bytes();
    for (std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(30), std::size_t(60), bytes.size() / 2,
                          bytes.size() - 1}) {
        const std::string path =
            write_bytes("truncated.weights", {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)});
        INFO("truncated to " << n << " bytes");
        CHECK_THROWS_WITH(read_weights_file(path), Catch::StartsWith(path) && Catch::Contains("truncated"));
    }
}

TEST_CASE("weights file: wrong magic is named", "[weights]") {
    auto bytes = valid_bytes();
    bytes[0] = 'X';
    const std::string path = write_bytes("magic.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path), Catch::StartsWith(path) && Catch::Contains("magic"));
}

TEST_CASE("weights file: a newer format version is named", "[weights]") {
    auto bytes = valid_bytes();
    bytes[kVersionOffset] = 3;
    const std::string path = write_bytes("version.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path),
                      Catch::StartsWith(path) && Catch::Contains("format version 3"));
}

TEST_CASE("weights file: the cost-formula version round-trips and a format-1 file reads as formula 1",
          "[weights]") {
    WeightsFile f{NetworkWeights::initial(3), "formula test"};
    CHECK(f.formula_version == kCostFormulaVersion);
    f.formula_version = 1;
    CHECK(decode_weights(encode_weights(f).data(), encode_weights(f).size(), "f1").formula_version == 1);
    f.formula_version = kCostFormulaVersion;
    const std::vector<unsigned char> v1 = as_format_version_1(encode_weights(f));
    const WeightsFile old = decode_weights(v1.data(), v1.size(), "format 1");
    CHECK(old.formula_version == 1);
    CHECK(old.provenance == f.provenance);
    CHECK(old.weights.flatten() == f.weights.flatten());
}

TEST_CASE("weights file: weights for a newer cost formula are refused by name", "[weights]") {
    auto bytes = valid_bytes();
    bytes[kFormulaOffset] = static_cast<unsigned char>(kCostFormulaVersion + 1);
    const std::string path = write_bytes("formula.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path),
                      Catch::StartsWith(path) && Catch::Contains("cost-formula version"));
}

TEST_CASE(
    "weights file: the same weights predict differently under formula 1 and 2 only through the serial chain",
    "[weights][formula]") {
    // Weights trained for formula 1 keep their predictions: the serial
    // chain's terms are zero for them, whatever the network outputs for c30, c31.
    WeightsFile f1{NetworkWeights::initial(5), "f1"}, f2 = f1;
    f1.formula_version = 1;
    const auto [c1, c2] = predictions(f1, f2, 4, 8);
    for (size_t i = 0; i < c1.size(); i++)
        CHECK(c2[i] > c1[i]); // the chain adds a positive cost
}

TEST_CASE("weights file: weights for another feature layout are refused", "[weights]") {
    auto bytes = valid_bytes();
    bytes[kScheduleLayoutOffset] = 9;
    const std::string path = write_bytes("layout.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path),
                      Catch::StartsWith(path) && Catch::Contains("layout version 9"));
}

TEST_CASE("weights file: a network of another size is refused", "[weights]") {
    auto bytes = valid_bytes();
    bytes[kFirstSizeOffset] = 76; // schedule features
    const std::string path = write_bytes("size.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path),
                      Catch::StartsWith(path) && Catch::Contains("wrong network size"));
}

TEST_CASE("weights file: a flipped bit in the parameters fails the checksum", "[weights]") {
    auto bytes = valid_bytes();
    bytes[bytes.size() - 100] ^= 0x01;
    const std::string path = write_bytes("crc.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path), Catch::StartsWith(path) && Catch::Contains("checksum"));
}

TEST_CASE("weights file: trailing bytes are refused", "[weights]") {
    auto bytes = valid_bytes();
    bytes.push_back(0);
    const std::string path = write_bytes("trailing.weights", bytes);
    CHECK_THROWS_WITH(read_weights_file(path), Catch::StartsWith(path) && Catch::Contains("trailing"));
}

TEST_CASE("weights file: random garbage never crashes the reader", "[weights]") {
    std::mt19937_64 rng(8);
    auto good = valid_bytes();
    for (int i = 0; i < 200; ++i) {
        auto bytes = good;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int k = 0; k < flips; ++k)
            bytes[rng() % bytes.size()] = static_cast<unsigned char>(rng());
        bytes.resize(rng() % (bytes.size() + 1));
        if (bytes == good) continue; // the flips happened to restore every byte
        CHECK_THROWS_AS(decode_weights(bytes.data(), bytes.size(), "fuzz"), std::runtime_error);
    }
}
