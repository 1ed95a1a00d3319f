#pragma once
// The schedule folder's record of what was promoted: SCHEDULES/promoted.json,
// one entry per pipeline name with the time it was promoted on (device,
// median, min, repetitions), where it came from (database, run, sample) and
// the CRC-32 of each file it put in the folder (NAME.schedule.h and the
// decision record NAME.gpusched.json).
//
// Invariants: the manifest and each promoted file are replaced atomically
// (atomic_file.h), the files first and the manifest last. A crash between
// them leaves new files under the old entry; their checksums then disagree
// with the entry, which promoted_files_intact() reports, and the next night
// replaces them rather than trusting a time that is not theirs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/modes/nightly/promotion_rule.h"

namespace gpusched {

struct PromotedEntry {
    MeasuredTime time;
    std::string database, generator_name, params, promoted_at;
    std::map<std::string, std::string> files; // file name in the folder -> CRC-32 (8 hex digits)
};

struct PromotedManifest {
    std::map<std::string, PromotedEntry> pipelines;
};

// SCHEDULES/promoted.json
std::string promoted_manifest_path(const std::string &schedules);
// An absent file is an empty manifest; a corrupt one is a UserError naming it.
PromotedManifest load_promoted_manifest(const std::string &schedules);
void save_promoted_manifest(const std::string &schedules, const PromotedManifest &manifest);

// Whether every file of the entry is in the folder with its recorded checksum.
bool promoted_files_intact(const std::string &schedules, const PromotedEntry &entry);

// Copies the candidate's schedule and decision record into the folder as
// NAME.schedule.h and NAME.gpusched.json (each atomically) and returns the
// entry's file map. schedule_file / record_file: the run's copies.
std::map<std::string, std::string> promote_schedule_files(const std::string &schedules,
                                                          const std::string &name,
                                                          const std::string &schedule_file,
                                                          const std::string &record_file);

} // namespace gpusched
