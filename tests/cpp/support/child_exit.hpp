// Waits for a child process that may hang: it gets a time limit, then is killed.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>

namespace zehal::test {

// Far above what any child of a test needs; a child still running then is taken as hung.
inline constexpr std::chrono::seconds kChildLimit{60};

// Waits for child `pid`: "" when it exited with status 0, else what went wrong (a hang is
// killed after `limit`).
inline std::string wait_for_child(pid_t pid, std::chrono::seconds limit = kChildLimit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0) return "waitpid failed";
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return "hung (killed after the time limit)";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace zehal::test
