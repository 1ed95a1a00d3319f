// gpusched_merge_feature_rows: concatenates feature-rows files (one per
// search, as the plugin's dump_states_path writes them) into one training
// set, dropping records that repeat an earlier one exactly (several searches
// of one pipeline cost many of the same states: the greedy samples share
// their first steps), and writes a table naming each pipeline.
//
//   gpusched_merge_feature_rows --out FILE [--names-out TSV] IN...
//
// Names come from the inputs' paths as collect_search_states.sh lays them
// out, <group>/<pipeline>__<config>.rows: a pipeline key is named after the
// first input it appears in, and grouped by that input's folder name. The
// table has one line per pipeline: key, name, group, records kept.
// gpusched_fit_default_weights --pipeline-names reads it to name pipelines
// in reports and to hold out whole pipelines group by group.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "costmodel/feature_rows_file.h"

using namespace gpusched;

namespace {

[[noreturn]] void usage(const std::string &why) {
    std::fprintf(stderr, "error: %s\nusage: gpusched_merge_feature_rows --out FILE [--names-out TSV] IN...\n",
                 why.c_str());
    std::exit(2);
}

struct PipelineInfo {
    std::string name, group;
    std::uint64_t records = 0;
};

// A record's identity: key, runtime, blob size and two independent 64-bit
// hashes of the blob (FNV-1a and the standard library's string hash).
// (Not the blob's own CRC-32: a CRC over a message that ends in its CRC is
// the same constant for every blob.) A false match needs both hashes to
// collide: negligible at ~1e5 records, and it would only drop one sample.
struct RecordId {
    std::uint32_t key;
    std::uint64_t size, fnv, std_hash, runtime_bits;
    bool operator<(const RecordId &o) const {
        return std::tie(key, size, fnv, std_hash, runtime_bits) <
               std::tie(o.key, o.size, o.fnv, o.std_hash, o.runtime_bits);
    }
};

RecordId identity(const FeatureRowsRawRecord &r) {
    RecordId id{};
    id.key = r.pipeline_key;
    id.size = r.blob.size();
    id.fnv = 14695981039346656037ull;
    for (unsigned char c : r.blob) {
        id.fnv ^= c;
        id.fnv *= 1099511628211ull;
    }
    id.std_hash = std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char *>(r.blob.data()), r.blob.size()));
    std::memcpy(&id.runtime_bits, &r.runtime_ms, sizeof id.runtime_bits);
    return id;
}

} // namespace

int main(int argc, char **argv) {
    std::string out, names_out;
    std::vector<std::string> inputs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out" || a == "--names-out") {
            if (i + 1 >= argc) usage(a + " needs a value");
            (a == "--out" ? out : names_out) = argv[++i];
        } else if (a.rfind("--", 0) == 0) {
            usage("unknown argument " + a);
        } else {
            inputs.push_back(a);
        }
    }
    if (out.empty()) usage("--out is required");
    if (inputs.empty()) usage("no input files");
    try {
        FeatureRowsWriter writer(out);
        std::set<RecordId> seen;
        std::map<std::uint32_t, PipelineInfo> pipelines;
        std::vector<std::uint32_t> order;
        std::uint64_t read = 0, duplicates = 0;
        for (const std::string &in : inputs) {
            const std::filesystem::path p(in);
            const std::string stem = p.stem().string();
            const std::string name = stem.substr(0, stem.find("__"));
            const std::string group = p.parent_path().filename().string();
            for (const FeatureRowsRawRecord &r : read_feature_rows_raw(in)) {
                ++read;
                if (!seen.insert(identity(r)).second) {
                    ++duplicates;
                    continue;
                }
                auto it = pipelines.find(r.pipeline_key);
                if (it == pipelines.end()) {
                    it = pipelines.emplace(r.pipeline_key, PipelineInfo{name, group.empty() ? "." : group, 0})
                             .first;
                    order.push_back(r.pipeline_key);
                } else if (it->second.name != name) {
                    // Two pipelines with identical features are one pipeline
                    // to the cost model; say so rather than pick silently.
                    std::fprintf(stderr, "note: %s has the pipeline features of %s (key %u); counted as %s\n",
                                 in.c_str(), it->second.name.c_str(), r.pipeline_key,
                                 it->second.name.c_str());
                }
                writer.append(r.pipeline_key, r.runtime_ms, r.blob);
                ++it->second.records;
            }
        }
        writer.close();
        if (!names_out.empty()) {
            std::ofstream t(names_out);
            if (!t) throw std::runtime_error(names_out + ": cannot write");
            t << "key\tname\tgroup\trecords\n";
            for (std::uint32_t k : order) {
                const PipelineInfo &pi = pipelines[k];
                t << k << '\t' << pi.name << '\t' << pi.group << '\t' << pi.records << '\n';
            }
            if (!t) throw std::runtime_error(names_out + ": error while writing");
        }
        std::printf("%zu inputs, %llu records read, %llu exact duplicates dropped, %u records written to %s, "
                    "%zu pipelines\n",
                    inputs.size(), static_cast<unsigned long long>(read),
                    static_cast<unsigned long long>(duplicates), writer.count(), out.c_str(),
                    pipelines.size());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
