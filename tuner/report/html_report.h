#pragma once
// The tuning report: one self-contained HTML file (inline CSS and SVG, no
// script, nothing fetched: no fonts, images or stylesheets from anywhere)
// that people open from disk the morning after a nightly run.
//
// Per pipeline and measuring device (report_data.h's groups, so two devices
// are never one series): the distribution of sample times, each run's tuning
// curve (best time so far over its samples, batch boundaries marked) and its
// predicted-versus-measured scatter (one colour per batch, the paper's
// figure 8), the model's rank correlation per batch, the spilled and failed
// samples with their reasons, and the winning schedule's source. Across
// pipelines: the speedup of each group's best over its measured baselines.
//
// Every string from the database is HTML-escaped (html_text.h).

#include <optional>
#include <string>

#include "tuner/report/report_data.h"

namespace gpusched::report {

// The page. `generated_by` names the program and version in the header.
std::string render_html_report(const ReportData &data, const std::string &generated_by);

// Writes the page to `path` through a temporary file in the same folder,
// renamed into place, so a reader never sees half a report. Throws UserError
// naming the path when it cannot be written.
void write_html_report(const ReportData &data, const std::string &generated_by, const std::string &path);

// What write_report wrote, for the caller's summary line.
struct ReportWritten {
    std::size_t runs = 0;   // selected runs, baselines included
    std::size_t groups = 0; // pipeline x device sections
};

// The whole command: opens the database (it must exist), reads what
// `filter` selects and writes the report to `out_path`. Throws UserError
// (empty selection, bad --since, unwritable path) or db::DbError (missing,
// corrupt or newer database). `gpusched report` and the nightly call this.
// With `learning`, the page also draws those figures (learning_section.h).
ReportWritten write_report(const std::string &db_path, const ReportFilter &filter,
                           const std::string &out_path, const std::string &generated_by,
                           std::optional<LearningReport> learning = std::nullopt);

} // namespace gpusched::report
