#include "headless_chromium.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

extern char **environ;

namespace gpusched::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string base64_decode(const std::string &in) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : in) {
        const int v = value(c);
        if (v < 0) continue; // padding, line breaks
        buffer = (buffer << 6) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((buffer >> bits) & 0xff);
        }
    }
    return out;
}

// A descriptor numbered above the ones Chromium's child must see (3, 4), so
// dup2 onto them never meets itself.
int high_fd(int fd) {
    const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return moved;
}

// One DevTools connection over the pipe: commands out, replies and events in.
class Devtools {
public:
    Devtools(int to_browser, int from_browser, Clock::time_point deadline)
        : out_(to_browser), in_(from_browser), deadline_(deadline) {}

    // Sends a command; returns its id.
    int send(const std::string &method, const json &params = json::object(),
             const std::string &session = "") {
        json msg = {{"id", ++next_id_}, {"method", method}, {"params", params}};
        if (!session.empty()) msg["sessionId"] = session;
        std::string text = msg.dump();
        text.push_back('\0');
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = write(out_, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw std::runtime_error("cannot write to Chromium's DevTools pipe: " +
                                         std::string(std::strerror(errno)));
            done += static_cast<std::size_t>(n);
        }
        return next_id_;
    }

    // The next message, or nullopt when `until` passed first. Throws when
    // the browser closed the pipe or the overall deadline passed.
    std::optional<json> next(Clock::time_point until) {
        for (;;) {
            const auto nul = buffer_.find('\0');
            if (nul != std::string::npos) {
                json msg = json::parse(buffer_.substr(0, nul));
                buffer_.erase(0, nul + 1);
                return msg;
            }
            const auto now = Clock::now();
            if (now >= deadline_) throw std::runtime_error("Chromium did not answer within the time limit");
            if (now >= until) return std::nullopt;
            const auto wait =
                std::chrono::duration_cast<std::chrono::milliseconds>(std::min(until, deadline_) - now);
            pollfd p{in_, POLLIN, 0};
            const int r = poll(&p, 1, static_cast<int>(wait.count()) + 1);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) continue;
            char chunk[65536];
            const ssize_t n = read(in_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("Chromium closed its DevTools pipe (it exited)");
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    // Waits for the reply to command `id`, passing every event on to `on_event`.
    template <typename F> json reply(int id, F &&on_event) {
        for (;;) {
            std::optional<json> msg = next(deadline_);
            if (!msg) continue;
            if (msg->contains("id") && (*msg)["id"] == id) {
                if (msg->contains("error"))
                    throw std::runtime_error("DevTools command failed: " + (*msg)["error"].dump());
                return (*msg)["result"];
            }
            if (msg->contains("method")) on_event(*msg);
        }
    }

private:
    int out_, in_;
    Clock::time_point deadline_;
    int next_id_ = 0;
    std::string buffer_;
};

} // namespace

std::string find_chromium() {
    const char *path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (const char *name : {"chromium", "chromium-browser"}) {
        std::size_t start = 0;
        while (start <= dirs.size()) {
            const std::size_t end = std::min(dirs.find(':', start), dirs.size());
            const std::string candidate = dirs.substr(start, end - start) + "/" + name;
            if (access(candidate.c_str(), X_OK) == 0) return candidate;
            start = end + 1;
        }
    }
    return "";
}

PageLoad load_in_headless_chromium(const std::string &html_path, const std::string &png_path, int width,
                                   int timeout_s) {
    PageLoad result;
    const std::string chromium = find_chromium();
    if (chromium.empty()) {
        result.failure = "Debian's chromium is not installed (not in PATH): install it with "
                         "`apt-get install chromium` or scripts/install-deps.sh --tests";
        return result;
    }
    const std::string url = "file://" + fs::absolute(html_path).lexically_normal().string();
    char profile_template[] = "/tmp/gpusched-chromium-XXXXXX";
    if (!mkdtemp(profile_template)) {
        result.failure = std::string("cannot make a Chromium profile directory: ") + std::strerror(errno);
        return result;
    }
    const std::string profile = profile_template;

    int to_browser[2], from_browser[2];
    if (pipe(to_browser) != 0 || pipe(from_browser) != 0) {
        result.failure = std::string("pipe: ") + std::strerror(errno);
        return result;
    }
    for (int *fd : {&to_browser[0], &to_browser[1], &from_browser[0], &from_browser[1]})
        *fd = high_fd(*fd);

    // No extensions, sync, first-run pages or component updates: nothing but
    // the page may touch the network, so every request seen is the page's.
    std::vector<std::string> args = {chromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--remote-debugging-pipe",
                                     "--user-data-dir=" + profile,
                                     "--no-first-run",
                                     "--no-default-browser-check",
                                     "--disable-extensions",
                                     "--disable-sync",
                                     "--disable-background-networking",
                                     "--disable-component-update",
                                     "--hide-scrollbars",
                                     "about:blank"};
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log_path = profile + "/chromium.log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_browser[0], 3);
    posix_spawn_file_actions_adddup2(&actions, from_browser[1], 4);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, chromium.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(to_browser[0]);
    close(from_browser[1]);
    if (rc != 0) {
        close(to_browser[1]);
        close(from_browser[0]);
        result.failure = "cannot start " + chromium + ": " + std::strerror(rc);
        return result;
    }

    const auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
    Devtools dt(to_browser[1], from_browser[0], deadline);
    std::string session;
    auto on_event = [&](const json &e) {
        const std::string method = e["method"];
        const json &p = e["params"];
        if (method == "Runtime.consoleAPICalled" && (p["type"] == "error" || p["type"] == "assert")) {
            std::string text;
            for (const auto &a : p["args"])
                text += (text.empty() ? "" : " ") + a.value("description", a.value("value", json("")).dump());
            result.console_errors.push_back("console." + p["type"].get<std::string>() + ": " + text);
        } else if (method == "Runtime.exceptionThrown") {
            result.console_errors.push_back("exception: " + p["exceptionDetails"].dump());
        } else if (method == "Log.entryAdded" && p["entry"]["level"] == "error") {
            result.console_errors.push_back(p["entry"]["source"].get<std::string>() + ": " +
                                            p["entry"]["text"].get<std::string>() + " " +
                                            p["entry"].value("url", std::string()));
        } else if (method == "Network.requestWillBeSent") {
            const std::string requested = p["request"]["url"];
            if (requested != url) result.requests.push_back(requested);
        } else if (method == "Page.loadEventFired") {
            result.loaded = true;
        }
    };
    try {
        const json target = dt.reply(dt.send("Target.createTarget", {{"url", "about:blank"}}), on_event);
        const json attached =
            dt.reply(dt.send("Target.attachToTarget", {{"targetId", target["targetId"]}, {"flatten", true}}),
                     on_event);
        session = attached["sessionId"];
        for (const char *domain : {"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"})
            dt.reply(dt.send(domain, json::object(), session), on_event);
        dt.reply(dt.send("Emulation.setDeviceMetricsOverride",
                         {{"width", width}, {"height", 1000}, {"deviceScaleFactor", 1}, {"mobile", false}},
                         session),
                 on_event);
        dt.reply(dt.send("Page.navigate", {{"url", url}}, session), on_event);
        while (!result.loaded) {
            std::optional<json> msg = dt.next(deadline);
            if (msg && msg->contains("method")) on_event(*msg);
        }
        // A second of quiet after the load event, for anything the page
        // would fetch or log late.
        const auto settle = Clock::now() + std::chrono::seconds(1);
        while (std::optional<json> msg = dt.next(settle))
            if (msg->contains("method")) on_event(*msg);
        const json metrics = dt.reply(dt.send("Page.getLayoutMetrics", json::object(), session), on_event);
        const json &size =
            metrics.contains("cssContentSize") ? metrics["cssContentSize"] : metrics["contentSize"];
        result.page_height = static_cast<int>(size["height"].get<double>() + 0.5);
        if (!png_path.empty()) {
            const json shot = dt.reply(
                dt.send(
                    "Page.captureScreenshot",
                    {{"format", "png"},
                     {"captureBeyondViewport", true},
                     {"clip",
                      {{"x", 0}, {"y", 0}, {"width", width}, {"height", result.page_height}, {"scale", 1}}}},
                    session),
                on_event);
            std::ofstream png(png_path, std::ios::binary | std::ios::trunc);
            png << base64_decode(shot["data"].get<std::string>());
            if (!png) result.failure = "cannot write the screenshot " + png_path;
        }
        dt.send("Browser.close");
    } catch (const std::exception &e) {
        result.failure = std::string("headless Chromium: ") + e.what() + " (its log: " + log_path + ")";
    }
    close(to_browser[1]);
    close(from_browser[0]);
    // Browser.close ends it; a browser that hangs is killed with its group.
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i)
        usleep(50000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    kill(-pid, SIGKILL); // helpers (zygote, GPU process) left in the group
    if (result.failure.empty()) {
        std::error_code ec;
        fs::remove_all(profile, ec);
    }
    return result;
}

} // namespace gpusched::test
