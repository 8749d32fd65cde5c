// A helper program run with its standard streams connected to strings, with a deadline.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace zehal::compiler {

// What a child process did.
struct ChildResult {
    bool started = false;    // false: it could not be started (`out_text` says why)
    bool timed_out = false;  // it was killed at the deadline
    int exit_status = -1;    // its exit status when it exited
    int signal = 0;          // the signal that ended it, else 0
    std::string out_text;    // its standard output
    std::string err_text;    // its standard error
};

// Runs `program` (no arguments) with `input` on its standard input, and returns once it
// ended; killed (SIGKILL) when still running after `limit`. Safe in threaded processes
// (posix_spawn; no code of this process runs in the child).
ChildResult run_child(const std::string& program, std::string_view input, std::chrono::milliseconds limit);

}  // namespace zehal::compiler
