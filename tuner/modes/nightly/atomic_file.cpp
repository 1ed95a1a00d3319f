#include "tuner/modes/nightly/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "common/errors.h"

namespace gpusched {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what) {
    throw UserError("cannot write '" + path + "': " + what);
}

void sync_folder(const std::string &dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return; // the rename happened; only its durability is less sure
    ::fsync(fd);
    ::close(fd);
}

} // namespace

void write_file_atomically(const std::string &path, const std::string &bytes) {
    const fs::path dest(path);
    const std::string tmp =
        (dest.parent_path() / ("." + dest.filename().string() + ".tmp-" + std::to_string(getpid()))).string();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, std::strerror(errno));
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            fail(path, std::strerror(err));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, std::strerror(err));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        fail(path, std::strerror(err));
    }
    sync_folder(dest.parent_path().empty() ? "." : dest.parent_path().string());
}

void copy_file_atomically(const std::string &from, const std::string &to) {
    std::ifstream in(from, std::ios::binary);
    if (!in) fail(to, "cannot read '" + from + "'");
    std::ostringstream s;
    s << in.rdbuf();
    write_file_atomically(to, s.str());
}

} // namespace gpusched
