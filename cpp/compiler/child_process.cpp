// run_child: posix_spawn with three pipes, a poll loop that feeds and drains them.
#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace zehal::compiler {

namespace {

// A pipe whose ends close with it.
struct Pipe {
    int fd[2] = {-1, -1};
    bool open() { return pipe2(fd, O_CLOEXEC) == 0; }
    // A socket pair instead: writes to a child that died fail with EPIPE, no SIGPIPE
    // (send with MSG_NOSIGNAL).
    bool open_socket() { return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) == 0; }
    void close_end(int end) {
        if (fd[end] >= 0) {
            ::close(fd[end]);
            fd[end] = -1;
        }
    }
    ~Pipe() {
        close_end(0);
        close_end(1);
    }
};

// Feeds `input` to `to_child` and drains `from_out`, `from_err` until both close or the
// deadline passes; false on the deadline.
bool exchange(int to_child, int from_out, int from_err, std::string_view input, ChildResult* result,
              std::chrono::steady_clock::time_point deadline) {
    size_t written = 0;
    if (input.empty()) {
        ::close(to_child);
        to_child = -1;
    }
    fcntl(from_out, F_SETFL, O_NONBLOCK);
    fcntl(from_err, F_SETFL, O_NONBLOCK);
    if (to_child >= 0) {
        fcntl(to_child, F_SETFL, O_NONBLOCK);
    }
    std::array<char, 65536> buffer;
    while (from_out >= 0 || from_err >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                                std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            if (to_child >= 0) {
                ::close(to_child);
            }
            return false;
        }
        std::array<pollfd, 3> fds{pollfd{from_out, POLLIN, 0}, pollfd{from_err, POLLIN, 0},
                                  pollfd{to_child, POLLOUT, 0}};
        if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            int& fd = i == 0 ? from_out : from_err;
            if (fd < 0 || fds[i].revents == 0) {
                continue;
            }
            const ssize_t n = ::read(fd, buffer.data(), buffer.size());
            if (n > 0) {
                (i == 0 ? result->out_text : result->err_text).append(buffer.data(), static_cast<size_t>(n));
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                fd = -1;  // closed by the caller's Pipe
            }
        }
        if (to_child >= 0 && fds[2].revents != 0) {
            const ssize_t n = ::send(to_child, input.data() + written, input.size() - written, MSG_NOSIGNAL);
            if (n > 0) {
                written += static_cast<size_t>(n);
            }
            if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
                ::close(to_child);
                to_child = -1;
            }
        }
    }
    if (to_child >= 0) {
        ::close(to_child);
    }
    return true;
}

}  // namespace

ChildResult run_child(const std::string& program, std::string_view input, std::chrono::milliseconds limit) {
    ChildResult result;
    Pipe in, out, err;
    if (!in.open_socket() || !out.open() || !err.open()) {
        result.out_text = std::string("cannot create pipes: ") + std::strerror(errno);
        return result;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
    char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        result.out_text = "cannot run " + program + ": " + std::strerror(spawned);
        return result;
    }
    result.started = true;
    in.close_end(0);
    out.close_end(1);
    err.close_end(1);
    const int to_child = in.fd[1];
    in.fd[1] = -1;  // exchange() closes it
    const auto deadline = std::chrono::steady_clock::now() + limit;
    if (!exchange(to_child, out.fd[0], err.fd[0], input, &result, deadline)) {
        kill(pid, SIGKILL);
        result.timed_out = true;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
        result.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
    }
    return result;
}

}  // namespace zehal::compiler
