// Synchronous faults of one thread turned into an error: code run under run_guarded()
// that dereferences a bad address, divides by zero, executes a trap or (when asked)
// aborts returns to the caller instead of ending the process. Faults of other threads,
// and of this thread outside run_guarded(), keep their usual effect (the handlers chain
// to whatever was installed before).
#pragma once

#include <cstdint>
#include <string>

namespace zehal::compiler {

// What stopped a guarded call.
struct Fault {
    int signal = 0;         // SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT
    uintptr_t address = 0;  // the faulting address (si_addr), 0 for SIGABRT
    std::string describe() const;
};

// Calls fn(arg) on this thread; true when it returned, false with `fault` set when a
// fault ended it. `catch_abort` also catches abort() (the translator's assertions).
// Nothing `fn` had allocated or locked is released when it faults: callers run code
// that holds no locks (kernels) or accept the leak (a translator that asserted).
bool run_guarded(void (*fn)(void*), void* arg, bool catch_abort, Fault* fault);

}  // namespace zehal::compiler
