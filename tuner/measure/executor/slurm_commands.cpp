#include "tuner/measure/executor/slurm_commands.h"

#include <atomic>
#include <sstream>
#include <stdexcept>

#include "tuner/subprocess.h"

namespace gpusched {
namespace {

// Slurm's commands answer in well under a second on a healthy controller;
// a minute covers a busy one without hanging the driver forever.
constexpr std::chrono::seconds kCommandTimeout{60};

ProcessResult run_slurm(std::vector<std::string> argv) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = kCommandTimeout;
    return run_process(spec);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep))
        out.push_back(part);
    return out;
}

std::string join(const std::vector<std::string> &v, char sep) {
    std::string out;
    for (const auto &s : v)
        out += (out.empty() ? "" : std::string(1, sep)) + s;
    return out;
}

std::string first_word(const std::string &s) {
    const auto b = s.find_first_not_of(' ');
    if (b == std::string::npos) return {};
    return s.substr(b, s.find(' ', b) - b);
}

} // namespace

std::string sbatch_array(const SbatchRequest &r) {
    std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=" + r.job_name,
                                     "--array=0-" + std::to_string(r.array_size - 1),
                                     "--output=" + r.output_pattern, "--chdir=" + r.chdir,
                                     // Every element is a single process: one task, one node.
                                     "--ntasks=1", "--nodes=1",
                                     // The driver decides what to retry; Slurm's own requeue
                                     // would run an attempt twice behind its back.
                                     "--no-requeue"};
    if (!r.partition.empty()) argv.push_back("--partition=" + r.partition);
    if (!r.account.empty()) argv.push_back("--account=" + r.account);
    if (!r.gres.empty()) argv.push_back("--gres=" + r.gres);
    if (!r.time_limit.empty()) argv.push_back("--time=" + r.time_limit);
    argv.push_back(r.script);
    const ProcessResult p = run_slurm(argv);
    if (!p.ok()) {
        const std::string why = last_lines(p.err.empty() ? p.out : p.err, 1);
        throw std::runtime_error("sbatch refused the array (" + p.describe_failure() + ")" +
                                 (why.empty() ? "" : ": " + why));
    }
    // --parsable prints "<job id>" or "<job id>;<cluster>".
    const std::string id = split(last_lines(p.out, 1), ';').front();
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        throw std::runtime_error("sbatch printed no job id: '" + p.out + "'");
    return id;
}

std::map<std::string, SlurmJobState> query_array_jobs(const std::vector<std::string> &ids) {
    std::map<std::string, SlurmJobState> states;
    if (ids.empty()) return states;
    // squeue knows running jobs and, for MinJobAge seconds, finished ones.
    const ProcessResult q = run_slurm({"squeue", "--noheader", "--array", "--states=all",
                                       "--jobs=" + join(ids, ','), "--format=%i|%T|%r|%N"});
    if (q.ok()) {
        for (const auto &line : split(q.out, '\n')) {
            const auto f = split(line, '|');
            if (f.size() < 3 || f[0].find('_') == std::string::npos) continue;
            states[f[0]] = {f[1], f[2], "", f.size() > 3 ? f[3] : ""};
        }
    }
    // sacct knows the rest where the cluster keeps accounting; where it does
    // not, it says so once and is not asked again, and the caller waits for
    // the result files alone.
    static std::atomic<bool> accounting{true};
    if (!accounting.load()) return states;
    const ProcessResult a =
        run_slurm({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + join(ids, ','),
                   "--format=JobID,State,ExitCode,Reason,NodeList"});
    if ((a.out + a.err).find("accounting storage is disabled") != std::string::npos) accounting = false;
    if (a.ok()) {
        for (const auto &line : split(a.out, '\n')) {
            const auto f = split(line, '|');
            if (f.size() < 4 || f[0].find('_') == std::string::npos || f[0].find('[') != std::string::npos)
                continue;
            if (states.count(f[0])) continue;
            states[f[0]] = {first_word(f[1]), f[3], f[2], f.size() > 4 ? f[4] : ""};
        }
    }
    return states;
}

std::optional<SlurmJobState> job_details(const std::string &element) {
    const ProcessResult p = run_slurm({"scontrol", "--oneliner", "show", "job", element});
    if (!p.ok()) return std::nullopt;
    SlurmJobState s;
    for (const auto &field : split(last_lines(p.out, 1), ' ')) {
        const auto eq = field.find('=');
        if (eq == std::string::npos) continue;
        const std::string k = field.substr(0, eq), v = field.substr(eq + 1);
        if (k == "JobState")
            s.state = v;
        else if (k == "Reason")
            s.reason = v;
        else if (k == "ExitCode")
            s.exit_code = v;
        else if (k == "NodeList")
            s.node = v;
    }
    if (s.state.empty()) return std::nullopt;
    return s;
}

bool scancel(const std::vector<std::string> &jobs) {
    if (jobs.empty()) return true;
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), jobs.begin(), jobs.end());
    return run_slurm(argv).ok();
}

bool is_terminal_state(const std::string &s) {
    for (const char *t : {"COMPLETED", "FAILED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY",
                          "BOOT_FAIL", "DEADLINE", "CANCELLED", "REVOKED", "SPECIAL_EXIT"})
        if (s == t) return true;
    return false;
}

std::string missing_slurm_command() {
    for (const char *c : {"sbatch", "squeue", "sinfo", "scancel", "scontrol"})
        if (!find_executable(c)) return c;
    return {};
}

std::vector<std::string> slurm_partitions() {
    const ProcessResult p = run_slurm({"sinfo", "--noheader", "--format=%P"});
    if (!p.ok()) {
        const std::string why = last_lines(p.err.empty() ? p.out : p.err, 1);
        throw std::runtime_error(
            "Slurm does not answer (sinfo: " + (why.empty() ? p.describe_failure() : why) + ")");
    }
    std::vector<std::string> out;
    for (const auto &line : split(p.out, '\n'))
        if (!line.empty()) out.push_back(line);
    return out;
}

} // namespace gpusched
