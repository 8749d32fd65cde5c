// Runs a scenario that could crash or hang the driver in a child process, so the test reports
// it instead of dying with it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace zetest {

// How a child ended: "exit N", "signal N" or "timeout" (it was killed).
struct ChildEnd {
    std::string how;
    bool ok() const { return how == "exit 0"; }
};

// Forks; the child runs `body` and exits with its result (0: every check passed). The parent
// waits up to `limit` for it and kills it past that.
template <typename Body>
ChildEnd run_in_child(Body&& body, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const pid_t pid = fork();
    if (pid < 0) return {"fork failed"};
    if (pid == 0) _exit(body());
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return {"timeout"};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFSIGNALED(status)) return {"signal " + std::to_string(WTERMSIG(status))};
    return {"exit " + std::to_string(WEXITSTATUS(status))};
}

}  // namespace zetest
