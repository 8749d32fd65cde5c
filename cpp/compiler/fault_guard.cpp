// The fault guard: per-thread jump buffers, process-wide handlers installed once, an
// alternate signal stack per guarded thread (a fault may come from a full stack).
#include "fault_guard.hpp"

#include <setjmp.h>
#include <signal.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace zehal::compiler {

namespace {

constexpr std::array<int, 5> kSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kAltStackBytes = 64 * 1024;

// The handlers that were installed before ours, per signal number.
struct sigaction previous_actions[NSIG];

// This thread's guard: where a fault jumps to, whether aborts count, what was caught.
struct Guard {
    sigjmp_buf jump;
    bool catch_abort = false;
    Fault fault;
};
thread_local Guard* current_guard = nullptr;

// The thread's alternate stack, installed on its first guarded call.
struct AltStack {
    std::unique_ptr<uint8_t[]> memory;
    ~AltStack() {
        if (memory) {
            stack_t off{};
            off.ss_flags = SS_DISABLE;
            sigaltstack(&off, nullptr);
        }
    }
};
thread_local AltStack alt_stack;

// Gives the signal to whatever handled it before us (the default action by default).
void chain(int signal, siginfo_t* info, void* context) {
    const struct sigaction& old = previous_actions[signal];
    if ((old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction != nullptr) {
        old.sa_sigaction(signal, info, context);
        return;
    }
    if (old.sa_handler == SIG_IGN) {
        return;
    }
    if (old.sa_handler != SIG_DFL && old.sa_handler != nullptr) {
        old.sa_handler(signal);
        return;
    }
    // Default action: restore it and let the signal happen again (a fault re-executes the
    // faulting instruction; a sent signal is raised once more).
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, nullptr);
    if (info == nullptr || info->si_code <= 0) {
        raise(signal);
    }
}

void on_fault(int signal, siginfo_t* info, void* context) {
    Guard* guard = current_guard;
    const bool synchronous = info != nullptr && info->si_code > 0;
    if (guard != nullptr && (synchronous || (signal == SIGABRT && guard->catch_abort))) {
        guard->fault.signal = signal;
        guard->fault.address = signal == SIGABRT ? 0 : reinterpret_cast<uintptr_t>(info->si_addr);
        siglongjmp(guard->jump, 1);
    }
    chain(signal, info, context);
}

void install_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (int signal : kSignals) {
            struct sigaction action {};
            action.sa_sigaction = on_fault;
            // SA_NODEFER: the signal stays unblocked after the handler jumps out, so the jump
            // need not restore the signal mask (no system call per guarded call).
            action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
            sigemptyset(&action.sa_mask);
            sigaction(signal, &action, &previous_actions[signal]);
        }
    });
}

void ensure_alt_stack() {
    if (alt_stack.memory) {
        return;
    }
    stack_t current{};
    if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0) {
        return;  // the thread has one of its own
    }
    alt_stack.memory = std::make_unique<uint8_t[]>(kAltStackBytes);
    stack_t stack{};
    stack.ss_sp = alt_stack.memory.get();
    stack.ss_size = kAltStackBytes;
    sigaltstack(&stack, nullptr);
}

}  // namespace

std::string Fault::describe() const {
    char text[96];
    const char* name = signal == SIGSEGV  ? "SIGSEGV (invalid memory access)"
                       : signal == SIGBUS ? "SIGBUS (bus error)"
                       : signal == SIGFPE ? "SIGFPE (arithmetic fault)"
                       : signal == SIGILL ? "SIGILL (illegal instruction or trap)"
                                          : "SIGABRT (abort)";
    if (signal == SIGABRT) {
        std::snprintf(text, sizeof(text), "%s", name);
    } else {
        std::snprintf(text, sizeof(text), "%s at address 0x%llx", name, static_cast<unsigned long long>(address));
    }
    return text;
}

bool run_guarded(void (*fn)(void*), void* arg, bool catch_abort, Fault* fault) {
    install_handlers();
    ensure_alt_stack();
    Guard guard;
    guard.catch_abort = catch_abort;
    Guard* outer = current_guard;
    if (sigsetjmp(guard.jump, 0) == 0) {
        current_guard = &guard;
        fn(arg);
        current_guard = outer;
        return true;
    }
    current_guard = outer;
    if (fault != nullptr) {
        *fault = guard.fault;
    }
    return false;
}

}  // namespace zehal::compiler
