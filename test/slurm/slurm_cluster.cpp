#include "slurm_cluster.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include <cstring>

#include <fcntl.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace gpusched::test {
namespace fs = std::filesystem;

namespace {

// A port nobody listens on now: bind port 0 on loopback and read what the
// kernel gave. (A race with another process taking it is possible but rare;
// the daemon's log then says so.)
int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len) != 0)
        throw std::runtime_error("cannot find a free loopback port for Slurm");
    const int port = ntohs(a.sin_port);
    ::close(s);
    return port;
}

// Whether /sys/fs/cgroup holds a cgroup file system (v2, or v1's tmpfs of
// controllers). A plain chroot with /sys bound non-recursively has only an
// empty sysfs folder there.
bool cgroup_fs_mounted() {
    struct statfs s {};
    if (::statfs("/sys/fs/cgroup", &s) != 0) return false;
    return s.f_type == CGROUP2_SUPER_MAGIC || s.f_type == CGROUP_SUPER_MAGIC || s.f_type == TMPFS_MAGIC;
}

std::string host_name() {
    char buf[256] = {};
    ::gethostname(buf, sizeof buf - 1);
    return buf;
}

ProcessResult run(const std::vector<std::string> &argv, const std::map<std::string, std::string> &env = {}) {
    ProcessSpec spec;
    spec.argv = argv;
    spec.env = env;
    spec.timeout = std::chrono::seconds(60);
    return run_process(spec);
}

} // namespace

std::string SlurmCluster::tail(const std::string &log) const {
    return last_lines(read_file(log), 4);
}

// Each daemon runs in the foreground as our child (its own output to its
// log), so the fixture knows its pid and stops exactly what it started.
void SlurmCluster::start_daemon(const std::string &what, const std::vector<std::string> &argv,
                                const std::string &log) {
    const auto exe = find_executable(argv.front(), {"/usr/sbin", "/sbin"});
    if (!exe)
        throw std::runtime_error(what + " cannot start: '" + argv.front() +
                                 "' is not installed (scripts/install-deps.sh installs slurm-wlm and munge)");
    std::vector<std::string> full = argv;
    full.front() = *exe;
    std::vector<char *> argvp;
    for (auto &a : full)
        argvp.push_back(a.data());
    argvp.push_back(nullptr);
    std::vector<std::string> envs;
    for (char **e = environ; *e; ++e)
        if (std::string(*e).rfind("SLURM_CONF=", 0) != 0) envs.push_back(*e);
    envs.push_back("SLURM_CONF=" + conf_);
    std::vector<char *> envp;
    for (auto &e : envs)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string out = log + ".stdout";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, full.front().c_str(), &actions, nullptr, argvp.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error(what + " did not start: " + std::strerror(rc));
    pids_.push_back(pid);
    // Give it a moment, then make sure it is still there.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
        pids_.pop_back();
        throw std::runtime_error(what + " exited at once (status " + std::to_string(status) +
                                 "): " + last_lines(read_file(out), 3) + " | its log: " + tail(log));
    }
}

SlurmCluster::SlurmCluster() {
    try {
        start();
    } catch (...) {
        stop_all(); // a constructor that throws runs no destructor
        throw;
    }
}

void SlurmCluster::start() {
    if (::geteuid() != 0)
        throw std::runtime_error("the test Slurm runs slurmd, which needs root; run the slurm tests as root");
    const std::string d = dir_.path();
    node_ = host_name();
    for (const char *sub : {"munge", "state", "spool"})
        fs::create_directories(d + "/" + sub);
    fs::permissions(d + "/munge", fs::perms::owner_all, fs::perm_options::replace);

    // munged with a key of its own: 1024 random bytes, readable by its owner only.
    const std::string key = d + "/munge/munge.key";
    {
        std::ofstream k(key, std::ios::binary);
        std::random_device rd;
        for (int i = 0; i < 1024; ++i)
            k.put(static_cast<char>(rd() & 0xff));
    }
    fs::permissions(key, fs::perms::owner_read, fs::perm_options::replace);
    const std::string socket = d + "/munge/munge.socket";
    start_daemon("munged",
                 {"munged", "--socket=" + socket, "--key-file=" + key,
                  "--pid-file=" + d + "/munge/munged.pid", "--log-file=" + d + "/munge/munged.log",
                  "--seed-file=" + d + "/munge/munged.seed", "--force", "--foreground"},
                 d + "/munge/munged.log");

    conf_ = d + "/slurm.conf";
    std::ofstream c(conf_);
    c << "ClusterName=gpuschedtest\n"
      << "SlurmctldHost=" << node_ << "(127.0.0.1)\n"
      << "SlurmctldPort=" << free_port() << "\n"
      << "SlurmdPort=" << free_port() << "\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "AuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << socket << "\n"
      << "StateSaveLocation=" << d << "/state\n"
      << "SlurmdSpoolDir=" << d << "/spool\n"
      << "SlurmctldPidFile=" << d << "/slurmctld.pid\n"
      << "SlurmdPidFile=" << d << "/slurmd.pid\n"
      << "SlurmctldLogFile=" << d << "/slurmctld.log\n"
      << "SlurmdLogFile=" << d
      << "/slurmd.log\n"
      // No cgroups, no systemd: what a container or a chroot offers.
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n"
      << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
      << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
      << "ReturnToService=2\nMpiDefault=none\n"
      // Finished jobs stay in squeue's answer long enough for the driver.
      << "MinJobAge=600\n"
      << "NodeName=" << node_
      << " NodeAddr=127.0.0.1 CPUs=" << std::max(1u, std::thread::hardware_concurrency())
      << " State=UNKNOWN\n"
      << "PartitionName=debug Nodes=" << node_ << " Default=YES MaxTime=INFINITE State=UP\n";
    c.close();
    // slurmd 22.05 detects the cgroup version at start even when no plugin
    // uses cgroups, and stops ("Unable to initialize cgroup plugin") when
    // /sys/fs/cgroup holds none. Naming cgroup/v1 skips the detection; v1
    // touches the file system only for a controller, and none is used here.
    if (!cgroup_fs_mounted()) std::ofstream(d + "/cgroup.conf") << "CgroupPlugin=cgroup/v1\n";

    start_daemon("slurmctld", {"slurmctld", "-D", "-f", conf_, "-i"}, d + "/slurmctld.log");
    start_daemon("slurmd", {"slurmd", "-D", "-f", conf_, "-N", node_}, d + "/slurmd.log");

    // Ready when the node is idle.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::string last;
    while (std::chrono::steady_clock::now() < give_up) {
        const ProcessResult s = command({"sinfo", "--noheader", "--format=%T"});
        last = s.out + s.err;
        if (s.ok() && s.out.find("idle") != std::string::npos) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    throw std::runtime_error("the test Slurm's node never became idle (sinfo: " + last_lines(last, 1) +
                             ") | slurmctld: " + tail(d + "/slurmctld.log") +
                             " | slurmd: " + tail(d + "/slurmd.log"));
}

ProcessResult SlurmCluster::command(const std::vector<std::string> &argv) const {
    return run(argv, env());
}

void SlurmCluster::stop_daemon(pid_t pid) {
    if (::kill(pid, SIGTERM) != 0) return;
    int status = 0;
    for (int i = 0; i < 100; ++i) {
        if (::waitpid(pid, &status, WNOHANG) == pid) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
}

SlurmCluster::~SlurmCluster() {
    stop_all();
}

void SlurmCluster::stop_all() {
    // Jobs first (a running job's processes are slurmd's children), then the daemons.
    if (pids_.size() == 3) command({"scancel", "--full", "--user=root"});
    // slurmd, slurmctld, munged: the reverse of their start.
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it)
        stop_daemon(*it);
    pids_.clear();
}

} // namespace gpusched::test
