#pragma once
// A single-node Slurm for the tests, started and stopped by the fixture:
// munged with a key generated for the test, slurmctld and slurmd on free
// loopback ports, and a slurm.conf written for the test in a temporary
// folder. Nothing needs systemd or cgroups: processes are tracked by
// /proc (proctrack/linuxproc), tasks are not bound (task/none), no
// accounting daemon (accounting_storage/none; the driver follows jobs with
// squeue, which keeps finished jobs for MinJobAge seconds, and scontrol).
//
// The constructor throws std::runtime_error saying which daemon did not
// start and the last lines of its log; a test that needs Slurm then fails
// with that message rather than passing without it.

#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

#include "test_support.h"

namespace gpusched::test {

class SlurmCluster {
public:
    SlurmCluster();
    ~SlurmCluster();
    SlurmCluster(const SlurmCluster &) = delete;
    SlurmCluster &operator=(const SlurmCluster &) = delete;

    // What a process needs in its environment to talk to this cluster.
    std::map<std::string, std::string> env() const { return {{"SLURM_CONF", conf_}}; }
    const std::string &conf() const { return conf_; }
    // Runs a Slurm client command (squeue, sinfo, ...) against this cluster.
    ProcessResult command(const std::vector<std::string> &argv) const;

private:
    void start_daemon(const std::string &what, const std::vector<std::string> &argv, const std::string &log);
    void start();
    void stop_all();
    void stop_daemon(pid_t pid);
    std::string tail(const std::string &log) const;

    TempDir dir_;
    std::string conf_, node_;
    std::vector<pid_t> pids_; // the daemons, in the order they started
};

} // namespace gpusched::test
