// Featurization blobs survive a round trip and corrupt ones are clear errors.
#include "test/catch2_compat.h"

#include <cmath>

#include "costmodel/feature_rows_file.h"
#include "costmodel/featurization_blob.h"
#include "fixtures.h"

using namespace gpusched;

namespace {

struct Sample {
    std::vector<PipelineFeatures> pipeline;
    StateFeatures state;
};

Sample make_sample() {
    std::mt19937_64 rng(5);
    SyntheticPipeline sp;
    do
        sp = random_synthetic_pipeline(rng);
    while (sp.stages.size() < 2);
    return {sp.stages, random_synthetic_state(sp, test::h100(), rng)};
}

} // namespace

TEST_CASE("featurization blob: round trip keeps every value bit for bit", "[blob]") {
    const Sample s = make_sample();
    const auto bytes = serialize_featurization(s.pipeline, s.state);
    const auto back = deserialize_featurization(bytes.data(), bytes.size());
    REQUIRE(back.pipeline.size() == s.pipeline.size());
    for (std::size_t i = 0; i < s.pipeline.size(); ++i)
        CHECK(back.pipeline[i].values == s.pipeline[i].values);
    CHECK(back.state.stage_ids == s.state.stage_ids);
    REQUIRE(back.state.schedule.size() == s.state.schedule.size());
    for (std::size_t i = 0; i < s.state.schedule.size(); ++i)
        CHECK(back.state.schedule[i].values == s.state.schedule[i].values);
}

TEST_CASE("featurization blob: every truncation is a clear error", "[blob]") {
    const Sample s = make_sample();
    const auto bytes = serialize_featurization(s.pipeline, s.state);
    for (std::size_t n = 0; n < bytes.size(); n += 97)
        CHECK_THROWS_WITH(deserialize_featurization(bytes.data(), n, "blob of sample 7"),
                          Catch::Contains("blob of sample 7") && Catch::Contains("truncated"));
}

TEST_CASE("featurization blob: a flipped byte fails the checksum", "[blob]") {
    const Sample s = make_sample();
    auto bytes = serialize_featurization(s.pipeline, s.state);
    bytes[bytes.size() / 2] ^= 0x40;
    CHECK_THROWS_WITH(deserialize_featurization(bytes.data(), bytes.size()), Catch::Contains("checksum"));
}

TEST_CASE("featurization blob: wrong magic, wrong version and trailing bytes are named", "[blob]") {
    const Sample s = make_sample();
    auto bytes = serialize_featurization(s.pipeline, s.state);
    auto bad = bytes;
    bad[0] = 'X';
    CHECK_THROWS_WITH(deserialize_featurization(bad.data(), bad.size()), Catch::Contains("magic"));
    bad = bytes;
    bad[4] = 99;
    CHECK_THROWS_WITH(deserialize_featurization(bad.data(), bad.size()), Catch::Contains("blob version"));
    bad = bytes;
    bad.push_back(0);
    CHECK_THROWS_WITH(deserialize_featurization(bad.data(), bad.size()), Catch::Contains("trailing"));
}

TEST_CASE("featurization blob: a state naming a stage outside the pipeline is refused", "[blob]") {
    Sample s = make_sample();
    s.state.stage_ids[0] = 99;
    CHECK_THROWS_AS(serialize_featurization(s.pipeline, s.state), std::invalid_argument);
}

TEST_CASE("feature-rows file: round trip groups samples by pipeline key", "[rows]") {
    std::mt19937_64 rng(9);
    std::vector<FeatureRowsRecord> recs;
    std::vector<SyntheticPipeline> pipes = {random_synthetic_pipeline(rng), random_synthetic_pipeline(rng)};
    for (int i = 0; i < 6; ++i) {
        FeatureRowsRecord r;
        r.pipeline_key = static_cast<std::uint32_t>(10 + i % 2);
        r.runtime_ms = 1.0 + i;
        r.pipeline = pipes[i % 2].stages;
        r.state = random_synthetic_state(pipes[i % 2], test::h100(), rng);
        recs.push_back(r);
    }
    const std::string path = test::tmp_path("rows_roundtrip.gsrows");
    write_feature_rows(path, recs);
    const auto data = read_feature_rows(path);
    REQUIRE(data.size() == 2);
    CHECK(data[0].name == "pipeline 10");
    CHECK(data[0].runtimes_ms == std::vector<double>{1, 3, 5});
    CHECK(data[1].runtimes_ms == std::vector<double>{2, 4, 6});
    CHECK(data[1].states[2].schedule[0].values == recs[5].state.schedule[0].values);
}

TEST_CASE("feature-rows file: one key with two different pipelines is an error", "[rows]") {
    std::mt19937_64 rng(9);
    std::vector<FeatureRowsRecord> recs(2);
    for (auto &r : recs) {
        const auto sp = random_synthetic_pipeline(rng);
        r.pipeline = sp.stages;
        r.state = random_synthetic_state(sp, test::h100(), rng);
        r.runtime_ms = 1;
    }
    recs[1].pipeline[0].values[0] += 1; // guaranteed to differ
    const std::string path = test::tmp_path("rows_conflict.gsrows");
    write_feature_rows(path, recs);
    CHECK_THROWS_WITH(read_feature_rows(path),
                      Catch::Contains("record 1") && Catch::Contains("different pipeline"));
}

TEST_CASE("feature-rows writer and raw reader round trip records byte for byte", "[rows]") {
    std::mt19937_64 rng(13);
    const auto sp = random_synthetic_pipeline(rng);
    std::vector<std::vector<unsigned char>> blobs;
    const std::string path = test::tmp_path("rows_writer.gsrows");
    {
        FeatureRowsWriter w(path);
        for (int i = 0; i < 5; ++i) {
            blobs.push_back(
                serialize_featurization(sp.stages, random_synthetic_state(sp, test::h100(), rng)));
            w.append(7, i == 2 ? std::nan("") : 0.5 * i, blobs.back());
        }
        CHECK(w.count() == 5);
        w.close();
    }
    const auto raw = read_feature_rows_raw(path);
    REQUIRE(raw.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
        CHECK(raw[i].pipeline_key == 7);
        CHECK(raw[i].blob == blobs[i]);
    }
    CHECK(std::isnan(raw[2].runtime_ms));
    CHECK(raw[4].runtime_ms == 2.0);
    // The decoding reader agrees.
    const auto data = read_feature_rows(path);
    REQUIRE(data.size() == 1);
    CHECK(data[0].states.size() == 5);
}

TEST_CASE("feature-rows writer never leaves a file that silently looks shorter", "[rows]") {
    std::mt19937_64 rng(14);
    const auto sp = random_synthetic_pipeline(rng);
    const std::string path = test::tmp_path("rows_unclosed.gsrows");
    {
        FeatureRowsWriter w(path);
        w.append(1, 1.0, serialize_featurization(sp.stages, random_synthetic_state(sp, test::h100(), rng)));
        // destroyed without close(): the header still counts 0 records
    }
    CHECK_THROWS_WITH(read_feature_rows_raw(path), Catch::Contains("trailing"));
    CHECK_THROWS_WITH(read_feature_rows(path), Catch::Contains("trailing"));
}
